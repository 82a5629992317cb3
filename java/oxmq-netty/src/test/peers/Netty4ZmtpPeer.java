import com.spotify.netty4.handler.codec.zmtp.ZMTPCodec;
import com.spotify.netty4.handler.codec.zmtp.ZMTPHandshakeSuccess;
import com.spotify.netty4.handler.codec.zmtp.ZMTPMessage;
import com.spotify.netty4.handler.codec.zmtp.ZMTPProtocol;
import com.spotify.netty4.handler.codec.zmtp.ZMTPProtocols;
import com.spotify.netty4.handler.codec.zmtp.ZMTPSocketType;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Interop peer for oxmq-netty's tests on com.spotify:netty4-zmtp 0.4.0 (netty 4.0, own JVM):
 * {@code Netty4ZmtpPeer router|dealer ZMTP10|ZMTP20 bind|connect:PORT}. netty4-zmtp is a codec
 * without routing envelopes: the "router" replies [echo, peer identity, frames...] directly;
 * the "dealer" sends [ping, x] after its handshake and expects [pong, peer-dealer].
 */
public class Netty4ZmtpPeer {
  public static void main(String[] args) throws Exception {
    final String scenario = args[0];
    final ZMTPProtocol protocol = args[1].equals("ZMTP10") ? ZMTPProtocols.ZMTP10
        : ZMTPProtocols.ZMTP20;
    String where = args[2];
    final boolean router = scenario.equals("router");
    final EventLoopGroup group = new NioEventLoopGroup(1);
    ChannelInitializer<SocketChannel> init = new ChannelInitializer<SocketChannel>() {
      @Override
      protected void initChannel(SocketChannel ch) {
        ch.pipeline().addLast(ZMTPCodec.builder()
            .protocol(protocol)
            .socketType(router ? ZMTPSocketType.ROUTER : ZMTPSocketType.DEALER)
            .localIdentity(router ? "" : "peer-dealer")
            .build());
        ch.pipeline().addLast(new Handler(router));
      }
    };
    if (where.equals("bind")) {
      Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
          .childHandler(init).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
      System.out.println("PORT " + ((InetSocketAddress) server.localAddress()).getPort());
      System.out.flush();
    } else {
      int port = Integer.parseInt(where.substring("connect:".length()));
      new Bootstrap().group(group).channel(NioSocketChannel.class).handler(init)
          .connect(new InetSocketAddress("127.0.0.1", port)).sync();
    }
    Thread.sleep(15000);
    System.err.println("timed out");
    System.exit(2);
  }

  static final class Handler extends ChannelInboundHandlerAdapter {
    final boolean router;
    ByteBuffer peerIdentity;

    Handler(boolean router) {
      this.router = router;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof ZMTPHandshakeSuccess) {
        ZMTPHandshakeSuccess s = (ZMTPHandshakeSuccess) evt;
        peerIdentity = s.session().peerIdentity();
        System.out.println("HANDSHAKE " + s.session().negotiatedVersion());
        System.out.flush();
        if (!router) {
          ctx.writeAndFlush(ZMTPMessage.fromUTF8("ping", "x"));
        }
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      System.exit(0);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ZMTPMessage m = (ZMTPMessage) msg;
      if (router) {
        List<ByteBuf> frames = new ArrayList<ByteBuf>();
        frames.add(Unpooled.copiedBuffer("echo", StandardCharsets.UTF_8));
        frames.add(Unpooled.wrappedBuffer(peerIdentity.duplicate()));
        for (int i = 0; i < m.size(); i++) {
          frames.add(m.frame(i).retain());
        }
        m.release();
        // netty4-zmtp 0.4.0 does not complete the promise of a batched write: report before
        // writing, and exit when the other side closes the connection.
        System.out.println("OK " + StandardCharsets.UTF_8.decode(peerIdentity.duplicate()));
        System.out.flush();
        ctx.writeAndFlush(ZMTPMessage.from(frames));
      } else {
        boolean ok = m.size() == 2 && m.frame(0).toString(StandardCharsets.UTF_8).equals("pong")
            && m.frame(1).toString(StandardCharsets.UTF_8).equals("peer-dealer");
        System.out.println(ok ? "OK" : "BAD " + m);
        System.out.flush();
        System.exit(ok ? 0 : 3);
      }
    }
  }
}
