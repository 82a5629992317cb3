// A ZMTP 1.0 / 2.0 peer for interop/tests/legacy_peers.rs on Spotify's netty4-zmtp 0.4.0 (Maven
// Central; built on netty 4.0, which goes on its classpath: netty-all 4.0.56.Final).
//
// Usage: java NettyZmtpPeer SCENARIO PROTOCOL HOST:PORT ID
//   PROTOCOL: 1.0 (ZMTPProtocols.ZMTP10) or 2.0 (ZMTPProtocols.ZMTP20, interop off)
//   dealer-connect  DEALER with identity ID connects; sends ["ping", "x", "", 300 x 'z'],
//                   expects ["pong", "x", "", 300 x 'z']
//   router-bind     ROUTER-typed codec listening on HOST:PORT; expects ["ping", rest...] from a
//                   peer whose identity is ID, replies ["pong", rest...]
//   sub-connect     SUB with identity ID connects; with 2.0 sends the subscription message
//                   "\1news" (1.0 peers send none: the publisher implies subscribe-all);
//                   expects ["news", "yes"]
// Prints "HANDSHAKE <version> <peer identity>" when the handshake completes, then "OK" or
// "FAIL <why>"; exits when stdin closes.

import com.spotify.netty4.handler.codec.zmtp.ZMTPCodec;
import com.spotify.netty4.handler.codec.zmtp.ZMTPHandshakeSuccess;
import com.spotify.netty4.handler.codec.zmtp.ZMTPMessage;
import com.spotify.netty4.handler.codec.zmtp.ZMTPProtocols;
import com.spotify.netty4.handler.codec.zmtp.ZMTPSession;
import com.spotify.netty4.handler.codec.zmtp.ZMTPSocketType;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.ReferenceCountUtil;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

public class NettyZmtpPeer {
    static String scenario;
    static String id;
    static final byte[] Z300 = new byte[300];

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static String str(ByteBuf b) {
        return b.toString(StandardCharsets.UTF_8);
    }

    static ZMTPMessage msg(byte[]... frames) {
        ByteBuf[] bufs = new ByteBuf[frames.length];
        for (int i = 0; i < frames.length; i++) {
            bufs[i] = Unpooled.wrappedBuffer(frames[i]);
        }
        return ZMTPMessage.from(bufs);
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static class Handler extends ChannelInboundHandlerAdapter {
        final ZMTPCodec codec;
        final boolean v2;

        Handler(ZMTPCodec codec, boolean v2) {
            this.codec = codec;
            this.v2 = v2;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof ZMTPHandshakeSuccess) {
                ZMTPSession s = ((ZMTPHandshakeSuccess) evt).session();
                byte[] peer = new byte[s.peerIdentity().remaining()];
                s.peerIdentity().duplicate().get(peer);
                say("HANDSHAKE " + s.negotiatedVersion() + " " + new String(peer, StandardCharsets.UTF_8));
                if (scenario.equals("dealer-connect")) {
                    ctx.writeAndFlush(msg(b("ping"), b("x"), new byte[0], Z300));
                } else if (scenario.equals("sub-connect") && v2) {
                    ctx.writeAndFlush(msg(b("\u0001news")));
                }
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object o) {
            ZMTPMessage m = (ZMTPMessage) o;
            try {
                switch (scenario) {
                    case "dealer-connect":
                        say(m.size() == 4 && str(m.frame(0)).equals("pong") && str(m.frame(1)).equals("x")
                                && m.frame(2).readableBytes() == 0 && str(m.frame(3)).equals(new String(Z300, StandardCharsets.UTF_8))
                                ? "OK" : "FAIL reply " + m);
                        break;
                    case "router-bind": {
                        byte[] peer = new byte[codec.session().peerIdentity().remaining()];
                        codec.session().peerIdentity().duplicate().get(peer);
                        if (!new String(peer, StandardCharsets.UTF_8).equals(id)) {
                            say("FAIL peer identity " + new String(peer, StandardCharsets.UTF_8));
                        } else if (m.size() < 1 || !str(m.frame(0)).equals("ping")) {
                            say("FAIL request " + m);
                        } else {
                            byte[][] out = new byte[m.size()][];
                            out[0] = b("pong");
                            for (int i = 1; i < m.size(); i++) {
                                out[i] = new byte[m.frame(i).readableBytes()];
                                m.frame(i).getBytes(m.frame(i).readerIndex(), out[i]);
                            }
                            ctx.writeAndFlush(msg(out));
                            say("OK");
                        }
                        break;
                    }
                    case "sub-connect":
                        if (m.size() == 2 && str(m.frame(0)).equals("news") && str(m.frame(1)).equals("yes")) {
                            say("OK");
                        } else {
                            say("FAIL publication " + m);
                        }
                        break;
                    default:
                        break;
                }
            } finally {
                ReferenceCountUtil.release(m);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            say("FAIL " + cause);
            ctx.close();
        }
    }

    public static void main(String[] args) throws Exception {
        Arrays.fill(Z300, (byte) 'z');
        scenario = args[0];
        final boolean v2 = args[1].equals("2.0");
        String[] hp = args[2].split(":");
        id = args[3];
        final ZMTPSocketType type = scenario.equals("router-bind") ? ZMTPSocketType.ROUTER
                : scenario.equals("sub-connect") ? ZMTPSocketType.SUB : ZMTPSocketType.DEALER;
        NioEventLoopGroup group = new NioEventLoopGroup(1);
        ChannelInitializer<SocketChannel> init = new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ZMTPCodec codec = ZMTPCodec.builder()
                        .protocol(v2 ? ZMTPProtocols.ZMTP20 : ZMTPProtocols.ZMTP10)
                        .socketType(type)
                        .localIdentity(id)
                        .build();
                ch.pipeline().addLast(codec, new Handler(codec, v2));
            }
        };
        if (scenario.equals("router-bind")) {
            new ServerBootstrap().group(group).channel(NioServerSocketChannel.class).childHandler(init)
                    .bind(hp[0], Integer.parseInt(hp[1])).sync();
        } else {
            new Bootstrap().group(group).channel(NioSocketChannel.class).handler(init)
                    .connect(hp[0], Integer.parseInt(hp[1])).sync();
        }
        say("READY");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        while (in.readLine() != null) {
        }
        group.shutdownGracefully().sync();
    }
}
