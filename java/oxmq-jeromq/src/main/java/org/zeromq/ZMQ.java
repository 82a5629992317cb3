package org.zeromq;

import io.oxmq.AgainException;
import io.oxmq.SocketOption;
import io.oxmq.ZmqException;
import io.oxmq.ZmqInterruptedException;

import java.io.Closeable;
import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * JeroMQ's {@code org.zeromq.ZMQ} on oxmq: {@link Context}, {@link Socket}, {@link Poller},
 * {@link Curve}, {@link Event} and the constants, with JeroMQ's signatures and conventions
 * (a non-blocking receive that finds nothing returns {@code null} or -1, a send that cannot
 * proceed returns {@code false}, a receive timeout returns {@code null}, other failures throw
 * {@link ZMQException} carrying the errno).
 */
public final class ZMQ {
    private ZMQ() {}

    /** Socket type numbers. */
    public static final int PAIR = 0, PUB = 1, SUB = 2, REQ = 3, REP = 4, DEALER = 5, ROUTER = 6,
            PULL = 7, PUSH = 8, XPUB = 9, XSUB = 10, STREAM = 11;
    /** Old names. */
    public static final int XREQ = DEALER, XREP = ROUTER;
    /** Send/receive flags. */
    public static final int DONTWAIT = 1, NOBLOCK = DONTWAIT, SNDMORE = 2;
    /** Poll events. */
    public static final int POLLIN = 1, POLLOUT = 2, POLLERR = 4;
    /** The charset of string frames. */
    public static final Charset CHARSET = StandardCharsets.UTF_8;
    /** An empty subscription: everything. */
    public static final byte[] SUBSCRIPTION_ALL = new byte[0];
    /** Proxy control commands. */
    public static final byte[] PROXY_PAUSE = "PAUSE".getBytes(CHARSET), PROXY_RESUME = "RESUME".getBytes(CHARSET),
            PROXY_TERMINATE = "TERMINATE".getBytes(CHARSET);
    /** Monitor event bits. */
    public static final int EVENT_CONNECTED = 1, EVENT_CONNECT_DELAYED = 2, EVENT_CONNECT_RETRIED = 4,
            EVENT_LISTENING = 8, EVENT_BIND_FAILED = 16, EVENT_ACCEPTED = 32, EVENT_ACCEPT_FAILED = 64,
            EVENT_CLOSED = 128, EVENT_CLOSE_FAILED = 256, EVENT_DISCONNECTED = 512, EVENT_MONITOR_STOPPED = 1024,
            EVENT_HANDSHAKE_FAILED_NO_DETAIL = 0x0800, EVENT_HANDSHAKE_SUCCEEDED = 0x1000,
            EVENT_HANDSHAKE_FAILED_PROTOCOL = 0x2000, EVENT_HANDSHAKE_FAILED_AUTH = 0x4000, EVENT_ALL = 0xFFFF;

    /** errno values by name, as JeroMQ's {@code ZMQ.Error}. */
    public enum Error {
        /** Success. */ NOERROR(0),
        /** Interrupted. */ EINTR(ZmqException.EINTR),
        /** Try again. */ EAGAIN(ZmqException.EAGAIN),
        /** Bad address. */ EFAULT(ZmqException.EFAULT),
        /** Invalid argument. */ EINVAL(ZmqException.EINVAL),
        /** Not supported. */ ENOTSUP(ZmqException.ENOTSUP),
        /** Protocol not supported. */ EPROTONOSUPPORT(ZmqException.EPROTONOSUPPORT),
        /** Address in use. */ EADDRINUSE(ZmqException.EADDRINUSE),
        /** Address not available. */ EADDRNOTAVAIL(ZmqException.EADDRNOTAVAIL),
        /** Connection refused. */ ECONNREFUSED(ZmqException.ECONNREFUSED),
        /** Host unreachable. */ EHOSTUNREACH(ZmqException.EHOSTUNREACH),
        /** Not a socket. */ ENOTSOCK(ZmqException.ENOTSOCK),
        /** Message too long. */ EMSGSIZE(ZmqException.EMSGSIZE),
        /** Wrong state. */ EFSM(ZmqException.EFSM),
        /** Incompatible protocol. */ ENOCOMPATPROTO(ZmqException.ENOCOMPATPROTO),
        /** Context terminated. */ ETERM(ZmqException.ETERM),
        /** No I/O thread. */ EMTHREAD(ZmqException.EMTHREAD);

        private final int code;

        Error(int code) {
            this.code = code;
        }

        /** The errno. */
        public int getCode() {
            return code;
        }

        /** The constant for {@code code} ({@code null} when it has none). */
        public static Error findByCode(int code) {
            for (Error e : values()) if (e.code == code) return e;
            return null;
        }

        /** The library's text. */
        public String getMessage() {
            return io.oxmq.Zmq.strerror(code);
        }
    }

    /** The library version as one number (major * 10000 + minor * 100 + patch). */
    public static int getFullVersion() {
        int[] v = io.oxmq.Zmq.version();
        return v[0] * 10000 + v[1] * 100 + v[2];
    }

    /** "major.minor.patch". */
    public static String getVersionString() {
        int[] v = io.oxmq.Zmq.version();
        return v[0] + "." + v[1] + "." + v[2];
    }

    /** A new context ({@code ioThreads} I/O threads). */
    public static Context context(int ioThreads) {
        return new Context(ioThreads);
    }

    /** Runs the built-in proxy until the context ends (returns false then). */
    public static boolean proxy(Socket frontend, Socket backend, Socket capture) {
        return proxy(frontend, backend, capture, null);
    }

    /** The steerable proxy; returns true when TERMINATE ended it, false when the context did. */
    public static boolean proxy(Socket frontend, Socket backend, Socket capture, Socket control) {
        try {
            io.oxmq.Proxy.runSteerable(frontend.s, backend.s, capture == null ? null : capture.s, control == null ? null : control.s);
            return true;
        } catch (io.oxmq.TermException e) {
            return false;
        } catch (ZmqException e) {
            throw ZMQException.of(e);
        }
    }

    /** Polls the items of {@code selector}-less JeroMQ style; see {@link Poller}. */
    public static int poll(PollItem[] items, long timeout) {
        return poll(null, items, items.length, timeout);
    }

    /** Polls {@code count} items for up to {@code timeout} ms (-1: forever). */
    public static int poll(java.nio.channels.Selector selector, PollItem[] items, int count, long timeout) {
        try (io.oxmq.Poller p = new io.oxmq.Poller(count)) {
            for (int i = 0; i < count; i++) p.register(items[i].socket.s, items[i].interest);
            int n = p.poll(timeout);
            for (int i = 0; i < count; i++) {
                items[i].ready = (p.isReadable(i) ? POLLIN : 0) | (p.isWritable(i) ? POLLOUT : 0) | (p.isError(i) ? POLLERR : 0);
            }
            return n;
        } catch (ZmqInterruptedException e) {
            return -1;
        } catch (ZmqException e) {
            throw ZMQException.of(e);
        }
    }

    /** A socket and the events to poll it for. */
    public static class PollItem {
        final Socket socket;
        final int interest;
        int ready;

        /** {@code socket} polled for {@code ops} (POLLIN, POLLOUT). */
        public PollItem(Socket socket, int ops) {
            this.socket = socket;
            this.interest = ops;
        }

        /** The socket. */
        public Socket getSocket() {
            return socket;
        }

        /** Whether the last poll found it readable. */
        public boolean isReadable() {
            return (ready & POLLIN) != 0;
        }

        /** Whether the last poll found it writable. */
        public boolean isWritable() {
            return (ready & POLLOUT) != 0;
        }

        /** Whether the last poll reported an error. */
        public boolean isError() {
            return (ready & POLLERR) != 0;
        }

        /** The events the last poll found. */
        public int readyOps() {
            return ready;
        }

        /** The events polled for. */
        public int interestOps() {
            return interest;
        }
    }

    // ---------------------------------------------------------------------------------------

    /** A context: the owner of sockets. */
    public static class Context implements Closeable {
        final io.oxmq.Context ctx;

        protected Context(int ioThreads) {
            ctx = new io.oxmq.Context(Math.max(1, ioThreads));
        }

        /** A new socket of {@code type}. */
        public Socket socket(SocketType type) {
            try {
                return new Socket(this, ctx.socket(type.oxmq()), type);
            } catch (ZmqException e) {
                throw ZMQException.of(e);
            } catch (IllegalStateException e) {
                throw new ZMQException("context is closed", ZmqException.ETERM, e);
            }
        }

        /** A new socket of type number {@code type}. */
        @Deprecated
        public Socket socket(int type) {
            return socket(SocketType.type(type));
        }

        /** A poller with room for {@code size} items. */
        public Poller poller(int size) {
            return new Poller(this, size);
        }

        /** A poller. */
        public Poller poller() {
            return poller(32);
        }

        /** Whether the context was terminated. */
        public boolean isTerminated() {
            return ctx.isClosed();
        }

        /** Whether the context was closed. */
        public boolean isClosed() {
            return ctx.isClosed();
        }

        /** Terminates the context: blocked calls end with ETERM, sockets are closed. */
        public void term() {
            ctx.close();
        }

        @Override
        public void close() {
            term();
        }

        /** I/O threads. */
        public int getIOThreads() {
            return ctx.get(io.oxmq.Context.IO_THREADS);
        }

        /** Maximum sockets. */
        public int getMaxSockets() {
            return ctx.get(io.oxmq.Context.MAX_SOCKETS);
        }

        /** Sets the maximum number of sockets. */
        public boolean setMaxSockets(int max) {
            ctx.set(io.oxmq.Context.MAX_SOCKETS, max);
            return true;
        }

        /** Sets the number of I/O threads (ZMQ_IO_THREADS); takes effect before the first socket. */
        public boolean setIOThreads(int threads) {
            ctx.set(io.oxmq.Context.IO_THREADS, threads);
            return true;
        }

        /** ZMQ_IPV6 for sockets made after this call. */
        public boolean setIPv6(boolean ipv6) {
            ctx.set(io.oxmq.Context.IPV6, ipv6 ? 1 : 0);
            return true;
        }

        /** ZMQ_IPV6 of new sockets. */
        public boolean getIPv6() {
            return ctx.get(io.oxmq.Context.IPV6) != 0;
        }

        /** ZMQ_IPV6 of new sockets. */
        public boolean isIPv6() {
            return getIPv6();
        }

        /** ZMQ_BLOCKY: whether terminating waits for sockets' linger (default true). */
        public boolean setBlocky(boolean blocky) {
            ctx.set(io.oxmq.Context.BLOCKY, blocky ? 1 : 0);
            return true;
        }

        /** ZMQ_BLOCKY. */
        public boolean getBlocky() {
            return ctx.get(io.oxmq.Context.BLOCKY) != 0;
        }

        /** ZMQ_BLOCKY. */
        public boolean isBlocky() {
            return getBlocky();
        }
    }

    // ---------------------------------------------------------------------------------------

    /** A socket, with JeroMQ's methods. */
    public static class Socket implements Closeable {
        final io.oxmq.Socket s;
        private final Context context;
        private final SocketType type;
        private volatile int errno;

        Socket(Context context, io.oxmq.Socket s, SocketType type) {
            this.context = context;
            this.s = s;
            this.type = type;
        }

        /** The oxmq socket underneath. */
        public io.oxmq.Socket oxmqSocket() {
            return s;
        }

        /** The socket type. */
        public SocketType getSocketType() {
            return type;
        }

        /** The socket type number. */
        public int getType() {
            return type.type;
        }

        /** The context. */
        Context context() {
            return context;
        }

        @Override
        public void close() {
            try {
                s.close();
            } catch (ZmqException e) {
                throw ZMQException.of(e);
            }
        }

        /** Notes EAGAIN when {@code done} is false (a call that returned without completing). */
        private boolean again(boolean done) {
            if (!done) errno = ZmqException.EAGAIN;
            return done;
        }

        private ZMQException wrap(ZmqException e) {
            errno = e.errno();
            return ZMQException.of(e);
        }

        // -- endpoints

        /** Binds; throws ZMQException on failure (as JeroMQ), returns true. */
        public boolean bind(String addr) {
            try {
                s.bind(addr);
                return true;
            } catch (ZmqException e) {
                throw wrap(e);
            }
        }

        /** Binds {@code addr} ("tcp://host") to a free port and returns it. */
        public int bindToRandomPort(String addr) {
            try {
                String ep = s.bind(addr + ":*");
                return Integer.parseInt(ep.substring(ep.lastIndexOf(':') + 1));
            } catch (ZmqException e) {
                throw wrap(e);
            }
        }

        /** Binds to a free port in [min, max). */
        public int bindToRandomPort(String addr, int min, int max) {
            for (int port = min; port < max; port++) {
                try {
                    s.bind(addr + ":" + port);
                    return port;
                } catch (ZmqException e) {
                    if (e.errno() != ZmqException.EADDRINUSE) throw wrap(e);
                }
            }
            throw new ZMQException("no free port in range", ZmqException.EADDRINUSE);
        }

        /** Connects. */
        public boolean connect(String addr) {
            try {
                s.connect(addr);
                return true;
            } catch (ZmqException e) {
                throw wrap(e);
            }
        }

        /** Unbinds; false when not bound there. */
        public boolean unbind(String addr) {
            try {
                s.unbind(addr);
                return true;
            } catch (ZmqException e) {
                return false;
            }
        }

        /** Disconnects; false when not connected there. */
        public boolean disconnect(String addr) {
            try {
                s.disconnect(addr);
                return true;
            } catch (ZmqException e) {
                return false;
            }
        }

        /** The last bound endpoint. */
        public String getLastEndpoint() {
            return s.lastEndpoint();
        }

        // -- send

        /** Sends {@code data}, blocking. */
        public boolean send(byte[] data) {
            return send(data, 0);
        }

        /** Sends {@code data} with {@code flags}; false when it cannot be queued (DONTWAIT or SNDTIMEO). */
        public boolean send(byte[] data, int flags) {
            return send(data, 0, data.length, flags);
        }

        /** Sends {@code len} bytes of {@code data} from {@code off}. */
        public boolean send(byte[] data, int off, int len, int flags) {
            try {
                return again(s.send(data, off, len, flags));
            } catch (AgainException e) {
                errno = e.errno();
                return false;
            } catch (ZmqInterruptedException e) {
                errno = e.errno();
                return false;
            } catch (ZmqException e) {
                throw wrap(e);
            }
        }

        /** Sends a UTF-8 string. */
        public boolean send(String data) {
            return send(data.getBytes(CHARSET), 0);
        }

        /** Sends a UTF-8 string with {@code flags}. */
        public boolean send(String data, int flags) {
            return send(data.getBytes(CHARSET), flags);
        }

        /** Sends with SNDMORE. */
        public boolean sendMore(String data) {
            return send(data, SNDMORE);
        }

        /** Sends with SNDMORE. */
        public boolean sendMore(byte[] data) {
            return send(data, SNDMORE);
        }

        /** Sends the remaining bytes of {@code data}; returns the count sent or -1. */
        public int sendByteBuffer(ByteBuffer data, int flags) {
            int n = data.remaining();
            try {
                return again(s.send(data, flags)) ? n : -1;
            } catch (AgainException e) {
                errno = e.errno();
                return -1;
            } catch (ZmqException e) {
                throw wrap(e);
            }
        }

        // -- receive

        /** Receives a frame, blocking; {@code null} on receive timeout. */
        public byte[] recv() {
            return recv(0);
        }

        /** Receives a frame; {@code null} with DONTWAIT and nothing there, or on timeout. */
        public byte[] recv(int flags) {
            try {
                byte[] b = s.recv(flags);
                again(b != null);
                return b;
            } catch (AgainException | ZmqInterruptedException e) {
                errno = e.errno();
                return null;
            } catch (ZmqException e) {
                throw wrap(e);
            }
        }

        /** Receives into {@code buffer[offset, offset+len)}; returns the frame size or -1. */
        public int recv(byte[] buffer, int offset, int len, int flags) {
            try {
                int n = s.recv(buffer, offset, len, flags);
                again(n >= 0);
                return n;
            } catch (AgainException | ZmqInterruptedException e) {
                errno = e.errno();
                return -1;
            } catch (ZmqException e) {
                throw wrap(e);
            }
        }

        /** Receives into {@code buffer}; returns the bytes written or -1. */
        public int recvByteBuffer(ByteBuffer buffer, int flags) {
            try {
                int n = s.recv(buffer, flags);
                again(n >= 0);
                return n;
            } catch (AgainException | ZmqInterruptedException e) {
                errno = e.errno();
                return -1;
            } catch (ZmqException e) {
                throw wrap(e);
            }
        }

        /** Receives a UTF-8 string, blocking. */
        public String recvStr() {
            return recvStr(0);
        }

        /** Receives a UTF-8 string; {@code null} as for {@link #recv(int)}. */
        public String recvStr(int flags) {
            byte[] b = recv(flags);
            return b == null ? null : new String(b, CHARSET);
        }

        /** Whether more frames of the current message follow. */
        public boolean hasReceiveMore() {
            return s.hasReceiveMore();
        }

        // -- draft types

        /** DISH: joins {@code group}; false (with {@link #errno()}) when it cannot, as JeroMQ. */
        public boolean join(String group) {
            try {
                s.join(group);
                return true;
            } catch (ZmqException e) {
                errno = e.errno();
                return false;
            }
        }

        /** DISH: leaves {@code group}; false when not joined. */
        public boolean leave(String group) {
            try {
                s.leave(group);
                return true;
            } catch (ZmqException e) {
                errno = e.errno();
                return false;
            }
        }

        /** PEER: connects to {@code addr} and returns the peer's routing id (0 on failure). */
        public int connectPeer(String addr) {
            try {
                return s.connectPeer(addr);
            } catch (ZmqException e) {
                errno = e.errno();
                return 0;
            }
        }

        /** Sends {@code data} as one frame to the peer {@code routingId} (SERVER, PEER; 0:
         *  none) or the group {@code group} (RADIO; null: none): {@link ZFrame#send}'s path. */
        boolean sendFrame(byte[] data, int routingId, String group, int flags) {
            if (routingId == 0 && group == null) return send(data, flags);
            try (io.oxmq.Frame f = io.oxmq.Frame.of(data)) {
                if (routingId != 0) f.setRoutingId(routingId);
                if (group != null) f.setGroup(group);
                return again(s.send(f, flags));
            } catch (AgainException | ZmqInterruptedException e) {
                errno = e.errno();
                return false;
            } catch (ZmqException e) {
                throw wrap(e);
            }
        }

        /** Receives one frame with its routing id (SERVER, PEER) and group (DISH), for
         *  {@link ZFrame#recvFrame}; {@code null} as for {@link #recv(int)}. */
        ZFrame recvFrame(int flags) {
            try (io.oxmq.Frame f = new io.oxmq.Frame()) {
                if (!again(s.recv(f, flags))) return null;
                ZFrame z = new ZFrame(f.toByteArray());
                z.received(f.hasMore(), f.routingId(), type == SocketType.DISH ? f.group() : null);
                return z;
            } catch (AgainException | ZmqInterruptedException e) {
                errno = e.errno();
                return null;
            } catch (ZmqException e) {
                throw wrap(e);
            }
        }

        // -- options

        private <T> boolean set(SocketOption<T> o, T v) {
            try {
                s.set(o, v);
                return true;
            } catch (ZmqException e) {
                throw wrap(e);
            }
        }

        private <T> T get(SocketOption<T> o) {
            try {
                return s.get(o);
            } catch (ZmqException e) {
                throw wrap(e);
            }
        }

        /** Subscribes to {@code topic} (prefix). */
        public boolean subscribe(byte[] topic) { return set(SocketOption.SUBSCRIBE, topic); }
        /** Subscribes to {@code topic} (prefix). */
        public boolean subscribe(String topic) { return subscribe(topic.getBytes(CHARSET)); }
        /** Unsubscribes. */
        public boolean unsubscribe(byte[] topic) { return set(SocketOption.UNSUBSCRIBE, topic); }
        /** Unsubscribes. */
        public boolean unsubscribe(String topic) { return unsubscribe(topic.getBytes(CHARSET)); }
        /** ZMQ_LINGER (ms). */
        public boolean setLinger(int value) { return set(SocketOption.LINGER, value); }
        /** ZMQ_LINGER (ms). */
        public boolean setLinger(long value) { return setLinger((int) value); }
        /** ZMQ_LINGER. */
        public int getLinger() { return get(SocketOption.LINGER); }
        /** ZMQ_RCVTIMEO (ms). */
        public boolean setReceiveTimeOut(int value) { return set(SocketOption.RCVTIMEO, value); }
        /** ZMQ_RCVTIMEO. */
        public int getReceiveTimeOut() { return get(SocketOption.RCVTIMEO); }
        /** ZMQ_SNDTIMEO (ms). */
        public boolean setSendTimeOut(int value) { return set(SocketOption.SNDTIMEO, value); }
        /** ZMQ_SNDTIMEO. */
        public int getSendTimeOut() { return get(SocketOption.SNDTIMEO); }
        /** ZMQ_SNDHWM. */
        public boolean setSndHWM(int value) { return set(SocketOption.SNDHWM, value); }
        /** ZMQ_SNDHWM. */
        public boolean setSndHWM(long value) { return setSndHWM((int) value); }
        /** ZMQ_SNDHWM. */
        public int getSndHWM() { return get(SocketOption.SNDHWM); }
        /** ZMQ_RCVHWM. */
        public boolean setRcvHWM(int value) { return set(SocketOption.RCVHWM, value); }
        /** ZMQ_RCVHWM. */
        public boolean setRcvHWM(long value) { return setRcvHWM((int) value); }
        /** ZMQ_RCVHWM. */
        public int getRcvHWM() { return get(SocketOption.RCVHWM); }
        /** Both high-water marks. */
        public boolean setHWM(int value) { return setSndHWM(value) && setRcvHWM(value); }
        /** Both high-water marks. */
        public boolean setHWM(long value) { return setHWM((int) value); }
        /** ZMQ_ROUTING_ID. */
        public boolean setIdentity(byte[] value) { return set(SocketOption.ROUTING_ID, value); }
        /** ZMQ_ROUTING_ID. */
        public byte[] getIdentity() { return get(SocketOption.ROUTING_ID); }
        /** ZMQ_ROUTER_MANDATORY. */
        public boolean setRouterMandatory(boolean v) { return set(SocketOption.ROUTER_MANDATORY, v); }
        /** ZMQ_ROUTER_HANDOVER. */
        public boolean setRouterHandover(boolean v) { return set(SocketOption.ROUTER_HANDOVER, v); }
        /** ZMQ_IMMEDIATE. */
        public boolean setImmediate(boolean v) { return set(SocketOption.IMMEDIATE, v); }
        /** ZMQ_CONFLATE. */
        public boolean setConflate(boolean v) { return set(SocketOption.CONFLATE, v); }
        /** ZMQ_XPUB_VERBOSE. */
        public boolean setXpubVerbose(boolean v) { return set(SocketOption.XPUB_VERBOSE, v); }
        /** ZMQ_REQ_RELAXED. */
        public boolean setReqRelaxed(boolean v) { return set(SocketOption.REQ_RELAXED, v); }
        /** ZMQ_REQ_CORRELATE. */
        public boolean setReqCorrelate(boolean v) { return set(SocketOption.REQ_CORRELATE, v); }
        /** ZMQ_RECONNECT_IVL (ms). */
        public boolean setReconnectIVL(int v) { return set(SocketOption.RECONNECT_IVL, v); }
        /** ZMQ_RECONNECT_IVL_MAX (ms). */
        public boolean setReconnectIVLMax(int v) { return set(SocketOption.RECONNECT_IVL_MAX, v); }
        /** ZMQ_MAXMSGSIZE. */
        public boolean setMaxMsgSize(long v) { return set(SocketOption.MAXMSGSIZE, v); }
        /** ZMQ_SNDBUF. */
        public boolean setSendBufferSize(int v) { return set(SocketOption.SNDBUF, v); }
        /** ZMQ_RCVBUF. */
        public boolean setReceiveBufferSize(int v) { return set(SocketOption.RCVBUF, v); }
        /** ZMQ_HEARTBEAT_IVL. */
        public boolean setHeartbeatIvl(int v) { return set(SocketOption.HEARTBEAT_IVL, v); }
        /** ZMQ_HEARTBEAT_TIMEOUT. */
        public boolean setHeartbeatTimeout(int v) { return set(SocketOption.HEARTBEAT_TIMEOUT, v); }
        /** ZMQ_HEARTBEAT_TTL. */
        public boolean setHeartbeatTtl(int v) { return set(SocketOption.HEARTBEAT_TTL, v); }
        /** ZMQ_HANDSHAKE_IVL. */
        public boolean setHandshakeIvl(int v) { return set(SocketOption.HANDSHAKE_IVL, v); }
        /** ZMQ_IPV6. */
        public boolean setIPv6(boolean v) { return set(SocketOption.IPV6, v); }
        /** ZMQ_TCP_KEEPALIVE. */
        public boolean setTCPKeepAlive(int v) { return set(SocketOption.TCP_KEEPALIVE, v); }
        /** ZMQ_PLAIN_SERVER. */
        public boolean setPlainServer(boolean v) { return set(SocketOption.PLAIN_SERVER, v); }
        /** ZMQ_PLAIN_USERNAME. */
        public boolean setPlainUsername(String v) { return set(SocketOption.PLAIN_USERNAME, v); }
        /** ZMQ_PLAIN_USERNAME. */
        public boolean setPlainUsername(byte[] v) { return setPlainUsername(new String(v, CHARSET)); }
        /** ZMQ_PLAIN_PASSWORD. */
        public boolean setPlainPassword(String v) { return set(SocketOption.PLAIN_PASSWORD, v); }
        /** ZMQ_PLAIN_PASSWORD. */
        public boolean setPlainPassword(byte[] v) { return setPlainPassword(new String(v, CHARSET)); }
        /** ZMQ_CURVE_SERVER. */
        public boolean setCurveServer(boolean v) { return set(SocketOption.CURVE_SERVER, v); }
        /** ZMQ_CURVE_PUBLICKEY: 32 raw bytes or 40 Z85 characters. */
        public boolean setCurvePublicKey(byte[] key) { return set(SocketOption.CURVE_PUBLICKEY, z85(key)); }
        /** ZMQ_CURVE_SECRETKEY: 32 raw bytes or 40 Z85 characters. */
        public boolean setCurveSecretKey(byte[] key) { return set(SocketOption.CURVE_SECRETKEY, z85(key)); }
        /** ZMQ_CURVE_SERVERKEY: 32 raw bytes or 40 Z85 characters. */
        public boolean setCurveServerKey(byte[] key) { return set(SocketOption.CURVE_SERVERKEY, z85(key)); }
        /** ZMQ_ZAP_DOMAIN. */
        public boolean setZAPDomain(String domain) { return set(SocketOption.ZAP_DOMAIN, domain); }
        /** ZMQ_ZAP_DOMAIN. */
        public boolean setZapDomain(String domain) { return setZAPDomain(domain); }
        /** ZMQ_ZAP_DOMAIN. */
        public String getZapDomain() { return get(SocketOption.ZAP_DOMAIN); }
        /** ZMQ_MECHANISM. */
        public int getMechanismCode() { return get(SocketOption.MECHANISM); }
        /** ZMQ_EVENTS. */
        public int getEvents() { return get(SocketOption.EVENTS); }

        /** Throws, as JeroMQ's does: ZMQ_REQ_RELAXED can be set but not read. */
        public boolean getReqRelaxed() { throw new UnsupportedOperationException("ZMQ_REQ_RELAXED is write-only"); }
        /** Throws, as JeroMQ's does: ZMQ_REQ_CORRELATE can be set but not read. */
        public boolean getReqCorrelate() { throw new UnsupportedOperationException("ZMQ_REQ_CORRELATE is write-only"); }
        /** ZMQ_IMMEDIATE. */
        public boolean getImmediate() { return get(SocketOption.IMMEDIATE); }
        /** ZMQ_IMMEDIATE. */
        public boolean isImmediate() { return getImmediate(); }
        /** The opposite of ZMQ_IMMEDIATE (its old name, ZMQ_DELAY_ATTACH_ON_CONNECT). */
        public boolean setDelayAttachOnConnect(boolean v) { return setImmediate(!v); }
        /** The opposite of ZMQ_IMMEDIATE. */
        public boolean getDelayAttachOnConnect() { return !getImmediate(); }
        /** ZMQ_CONFLATE. */
        public boolean getConflate() { return get(SocketOption.CONFLATE); }
        /** ZMQ_CONFLATE. */
        public boolean isConflate() { return getConflate(); }
        /** ZMQ_IPV6. */
        public boolean getIPv6() { return get(SocketOption.IPV6); }
        /** ZMQ_IPV6. */
        public boolean isIPv6() { return getIPv6(); }
        /** The opposite of ZMQ_IPV6 (ZMQ_IPV4ONLY, deprecated in libzmq). */
        public boolean setIPv4Only(boolean v) { return setIPv6(!v); }
        /** The opposite of ZMQ_IPV6. */
        public boolean getIPv4Only() { return !getIPv6(); }
        /** ZMQ_PLAIN_SERVER. */
        public boolean getPlainServer() { return get(SocketOption.PLAIN_SERVER); }
        /** ZMQ_PLAIN_SERVER. */
        public boolean setAsServerPlain(boolean v) { return setPlainServer(v); }
        /** ZMQ_PLAIN_SERVER. */
        public boolean getAsServerPlain() { return getPlainServer(); }
        /** ZMQ_PLAIN_SERVER. */
        public boolean isAsServerPlain() { return getPlainServer(); }
        /** ZMQ_PLAIN_USERNAME. */
        public String getPlainUsername() { return get(SocketOption.PLAIN_USERNAME); }
        /** ZMQ_PLAIN_PASSWORD. */
        public String getPlainPassword() { return get(SocketOption.PLAIN_PASSWORD); }
        /** ZMQ_CURVE_SERVER. */
        public boolean getCurveServer() { return get(SocketOption.CURVE_SERVER); }
        /** ZMQ_CURVE_SERVER. */
        public boolean setAsServerCurve(boolean v) { return setCurveServer(v); }
        /** ZMQ_CURVE_SERVER. */
        public boolean getAsServerCurve() { return getCurveServer(); }
        /** ZMQ_CURVE_SERVER. */
        public boolean isAsServerCurve() { return getCurveServer(); }
        /** ZMQ_CURVE_PUBLICKEY, 32 raw bytes (null when unset). */
        public byte[] getCurvePublicKey() { return rawKey(SocketOption.CURVE_PUBLICKEY); }
        /** ZMQ_CURVE_SECRETKEY, 32 raw bytes (null when unset). */
        public byte[] getCurveSecretKey() { return rawKey(SocketOption.CURVE_SECRETKEY); }
        /** ZMQ_CURVE_SERVERKEY, 32 raw bytes (null when unset). */
        public byte[] getCurveServerKey() { return rawKey(SocketOption.CURVE_SERVERKEY); }
        /** ZMQ_ZAP_DOMAIN. */
        public String getZAPDomain() { return getZapDomain(); }
        /** ZMQ_ZAP_DOMAIN. */
        public boolean setZAPDomain(byte[] domain) { return setZAPDomain(new String(domain, CHARSET)); }
        /** ZMQ_ZAP_DOMAIN. */
        public boolean setZapDomain(byte[] domain) { return setZAPDomain(domain); }
        /** The security mechanism in use (ZMQ_MECHANISM). */
        public Mechanism getMechanism() { return Mechanism.values()[getMechanismCode()]; }
        /** ZMQ_AFFINITY. */
        public boolean setAffinity(long v) { return set(SocketOption.AFFINITY, v); }
        /** ZMQ_AFFINITY. */
        public long getAffinity() { return get(SocketOption.AFFINITY); }
        /** ZMQ_BACKLOG. */
        public boolean setBacklog(int v) { return set(SocketOption.BACKLOG, v); }
        /** ZMQ_BACKLOG. */
        public boolean setBacklog(long v) { return setBacklog(Math.toIntExact(v)); }
        /** ZMQ_BACKLOG. */
        public int getBacklog() { return get(SocketOption.BACKLOG); }
        /** ZMQ_RCVHWM, as JeroMQ's getHWM reads it. */
        public int getHWM() { return getRcvHWM(); }
        /** ZMQ_MAXMSGSIZE. */
        public long getMaxMsgSize() { return get(SocketOption.MAXMSGSIZE); }
        /** ZMQ_SNDBUF. */
        public boolean setSendBufferSize(long v) { return setSendBufferSize(Math.toIntExact(v)); }
        /** ZMQ_SNDBUF. */
        public int getSendBufferSize() { return get(SocketOption.SNDBUF); }
        /** ZMQ_RCVBUF. */
        public boolean setReceiveBufferSize(long v) { return setReceiveBufferSize(Math.toIntExact(v)); }
        /** ZMQ_RCVBUF. */
        public int getReceiveBufferSize() { return get(SocketOption.RCVBUF); }
        /** ZMQ_RECONNECT_IVL (ms). */
        public boolean setReconnectIVL(long v) { return setReconnectIVL(Math.toIntExact(v)); }
        /** ZMQ_RECONNECT_IVL. */
        public int getReconnectIVL() { return get(SocketOption.RECONNECT_IVL); }
        /** ZMQ_RECONNECT_IVL_MAX (ms). */
        public boolean setReconnectIVLMax(long v) { return setReconnectIVLMax(Math.toIntExact(v)); }
        /** ZMQ_RECONNECT_IVL_MAX. */
        public int getReconnectIVLMax() { return get(SocketOption.RECONNECT_IVL_MAX); }
        /** ZMQ_HANDSHAKE_IVL. */
        public int getHandshakeIvl() { return get(SocketOption.HANDSHAKE_IVL); }
        /** ZMQ_HEARTBEAT_IVL. */
        public int getHeartbeatIvl() { return get(SocketOption.HEARTBEAT_IVL); }
        /** ZMQ_HEARTBEAT_TIMEOUT. */
        public int getHeartbeatTimeout() { return get(SocketOption.HEARTBEAT_TIMEOUT); }
        /** ZMQ_HEARTBEAT_TTL. */
        public int getHeartbeatTtl() { return get(SocketOption.HEARTBEAT_TTL); }
        /** ZMQ_TCP_KEEPALIVE (-1 system default, 0 off, 1 on). */
        public boolean setTCPKeepAlive(long v) { return setTCPKeepAlive(Math.toIntExact(v)); }
        /** ZMQ_TCP_KEEPALIVE. */
        public int getTCPKeepAlive() { return get(SocketOption.TCP_KEEPALIVE); }
        /** ZMQ_TCP_KEEPALIVE. */
        public long getTCPKeepAliveSetting() { return getTCPKeepAlive(); }
        /** ZMQ_TCP_KEEPALIVE_CNT. */
        public boolean setTCPKeepAliveCount(long v) { return set(SocketOption.TCP_KEEPALIVE_CNT, Math.toIntExact(v)); }
        /** ZMQ_TCP_KEEPALIVE_CNT. */
        public long getTCPKeepAliveCount() { return get(SocketOption.TCP_KEEPALIVE_CNT); }
        /** ZMQ_TCP_KEEPALIVE_IDLE (s). */
        public boolean setTCPKeepAliveIdle(long v) { return set(SocketOption.TCP_KEEPALIVE_IDLE, Math.toIntExact(v)); }
        /** ZMQ_TCP_KEEPALIVE_IDLE. */
        public long getTCPKeepAliveIdle() { return get(SocketOption.TCP_KEEPALIVE_IDLE); }
        /** ZMQ_TCP_KEEPALIVE_INTVL (s). */
        public boolean setTCPKeepAliveInterval(long v) { return set(SocketOption.TCP_KEEPALIVE_INTVL, Math.toIntExact(v)); }
        /** ZMQ_TCP_KEEPALIVE_INTVL. */
        public long getTCPKeepAliveInterval() { return get(SocketOption.TCP_KEEPALIVE_INTVL); }
        /** ZMQ_TOS. */
        public boolean setTos(int v) { return set(SocketOption.TOS, v); }
        /** ZMQ_TOS. */
        public int getTos() { return get(SocketOption.TOS); }
        /** ZMQ_RATE (kbit/s, multicast transports). */
        public boolean setRate(long v) { return set(SocketOption.RATE, Math.toIntExact(v)); }
        /** ZMQ_RATE. */
        public long getRate() { return get(SocketOption.RATE); }
        /** ZMQ_RECOVERY_IVL (ms, multicast transports). */
        public boolean setRecoveryInterval(long v) { return set(SocketOption.RECOVERY_IVL, Math.toIntExact(v)); }
        /** ZMQ_RECOVERY_IVL. */
        public long getRecoveryInterval() { return get(SocketOption.RECOVERY_IVL); }
        /** ZMQ_MULTICAST_HOPS. */
        public boolean setMulticastHops(long v) { return set(SocketOption.MULTICAST_HOPS, Math.toIntExact(v)); }
        /** ZMQ_MULTICAST_HOPS. */
        public long getMulticastHops() { return get(SocketOption.MULTICAST_HOPS); }
        /** ZMQ_MULTICAST_LOOP. */
        public boolean setMulticastLoop(boolean v) { return set(SocketOption.MULTICAST_LOOP, v); }
        /** ZMQ_MULTICAST_LOOP. */
        public boolean hasMulticastLoop() { return get(SocketOption.MULTICAST_LOOP); }
        /** ZMQ_SOCKS_PROXY (host:port). */
        public boolean setSocksProxy(String proxy) { return set(SocketOption.SOCKS_PROXY, proxy); }
        /** ZMQ_SOCKS_PROXY. */
        public boolean setSocksProxy(byte[] proxy) { return setSocksProxy(new String(proxy, CHARSET)); }
        /** ZMQ_SOCKS_PROXY. */
        public String getSocksProxy() { return get(SocketOption.SOCKS_PROXY); }
        /** ZMQ_CONNECT_ROUTING_ID: the routing id the next connect gives its peer. */
        public boolean setConnectRid(byte[] rid) { return set(SocketOption.CONNECT_ROUTING_ID, rid); }
        /** ZMQ_CONNECT_ROUTING_ID. */
        public boolean setConnectRid(String rid) { return setConnectRid(rid.getBytes(CHARSET)); }
        /** ZMQ_ROUTER_RAW. */
        public boolean setRouterRaw(boolean v) { return set(SocketOption.ROUTER_RAW, v); }
        /** ZMQ_PROBE_ROUTER. */
        public boolean setProbeRouter(boolean v) { return set(SocketOption.PROBE_ROUTER, v); }
        /** ZMQ_XPUB_MANUAL. */
        public boolean setXpubManual(boolean v) { return set(SocketOption.XPUB_MANUAL, v); }
        /** ZMQ_XPUB_NODROP. */
        public boolean setXpubNoDrop(boolean v) { return set(SocketOption.XPUB_NODROP, v); }
        /** ZMQ_XPUB_VERBOSER. */
        public boolean setXpubVerboser(boolean v) { return set(SocketOption.XPUB_VERBOSER, v); }
        /** ZMQ_HELLO_MSG (draft): a message sent first on every new connection. */
        public boolean setHelloMsg(byte[] msg) { return set(SocketOption.HELLO_MSG, msg); }
        /** ZMQ_DISCONNECT_MSG (draft): the message a ROUTER receives when a peer leaves. */
        public boolean setDisconnectMsg(byte[] msg) { return set(SocketOption.DISCONNECT_MSG, msg); }

        // The TLS of tls:// and wss:// (libzmq's draft ZMQ_WSS_* options; JeroMQ has no such
        // transports). Write only; bad PEM is a ZMQException (EINVAL) here, a server without a
        // certificate or a client trusting nothing one at bind or connect. The verified peer's
        // subject is a message property: read it through oxmqSocket() and io.oxmq.Frame.
        /** ZMQ_WSS_KEY_PEM: the private key of this side's certificate, PEM text. */
        public boolean setWssKeyPem(String pem) { return set(SocketOption.WSS_KEY_PEM, pem); }
        /** ZMQ_WSS_CERT_PEM: the certificate chain this side presents, PEM text. */
        public boolean setWssCertPem(String pem) { return set(SocketOption.WSS_CERT_PEM, pem); }
        /** ZMQ_WSS_TRUST_PEM: trust anchors, PEM text; a server with them requires client certificates. */
        public boolean setWssTrustPem(String pem) { return set(SocketOption.WSS_TRUST_PEM, pem); }
        /** ZMQ_WSS_HOSTNAME: the name the server's certificate must carry (default: the endpoint's host). */
        public boolean setWssHostname(String name) { return set(SocketOption.WSS_HOSTNAME, name); }
        /** ZMQ_WSS_TRUST_SYSTEM: trust the system's anchors too. */
        public boolean setWssTrustSystem(boolean v) { return set(SocketOption.WSS_TRUST_SYSTEM, v); }

        /** The errno of this socket's last failed call (EAGAIN after a receive or send that
         *  could not complete at once, ETERM after the context ended, ...); 0 before any. */
        public int errno() {
            return errno;
        }

        private byte[] rawKey(SocketOption<String> o) {
            String z = get(o);
            return z == null || z.isEmpty() ? null : io.oxmq.Curve.z85Decode(z);
        }

        /** The security mechanisms, in ZMQ_MECHANISM's numbering. */
        public enum Mechanism {
            /** No security. */
            NULL,
            /** User name and password in clear text (RFC 24). */
            PLAIN,
            /** CurveZMQ (RFC 26). */
            CURVE
        }

        private static String z85(byte[] key) {
            if (key.length == 32) return io.oxmq.Curve.z85Encode(key);
            if (key.length == 40) return new String(key, StandardCharsets.US_ASCII);
            throw new IllegalArgumentException("a CURVE key is 32 bytes or 40 Z85 characters");
        }

        /** Starts publishing events on a PAIR socket at {@code addr}; {@code null} stops. */
        public boolean monitor(String addr, int events) {
            try {
                s.monitor(addr, events);
                return true;
            } catch (ZmqException e) {
                throw wrap(e);
            }
        }

        @Override
        public String toString() {
            return "Socket[" + type + "]";
        }
    }

    // ---------------------------------------------------------------------------------------

    /** A set of sockets polled together (JeroMQ's ZMQ.Poller). */
    public static class Poller implements Closeable {
        /** Poll events. */
        public static final int POLLIN = ZMQ.POLLIN, POLLOUT = ZMQ.POLLOUT, POLLERR = ZMQ.POLLERR;
        private final io.oxmq.Poller p;
        private final List<PollItem> items = new ArrayList<>();
        private long timeout = -1;

        Poller(Context ctx, int size) {
            p = new io.oxmq.Poller(Math.max(1, size));
        }

        /** Registers {@code socket} for {@code events}; returns its index. */
        public int register(Socket socket, int events) {
            return register(new PollItem(socket, events));
        }

        /** Registers {@code item}, whose ready events each poll updates; returns its index. */
        public int register(PollItem item) {
            items.add(item);
            return p.register(item.socket.s, item.interest);
        }

        /** The item at {@code index}, or null. */
        public PollItem getItem(int index) {
            return index >= 0 && index < items.size() ? items.get(index) : null;
        }

        /** The timeout of {@link #poll()} in ms (-1: none, the default). */
        public long getTimeout() {
            return timeout;
        }

        /** Sets the timeout of {@link #poll()} in ms (-1: none). */
        public void setTimeout(long timeout) {
            this.timeout = timeout;
        }

        /** Registers {@code socket} for POLLIN|POLLOUT|POLLERR. */
        public int register(Socket socket) {
            return register(socket, POLLIN | POLLOUT | POLLERR);
        }

        /** Unregisters {@code socket}. */
        public void unregister(Socket socket) {
            p.unregister(socket.s);
            items.removeIf(x -> x.socket == socket);
        }

        /** Polls for up to {@link #getTimeout()} ms (by default until something is ready);
         *  returns the count, or -1 when interrupted. */
        public int poll() {
            return poll(timeout);
        }

        /** Polls for up to {@code tout} ms (-1: forever); -1 when interrupted. */
        public int poll(long tout) {
            int n;
            try {
                n = p.poll(tout);
            } catch (ZmqInterruptedException e) {
                return -1;
            } catch (ZmqException e) {
                throw ZMQException.of(e);
            }
            for (int i = 0; i < items.size(); i++) {
                items.get(i).ready = (p.isReadable(i) ? POLLIN : 0) | (p.isWritable(i) ? POLLOUT : 0)
                        | (p.isError(i) ? POLLERR : 0);
            }
            return n;
        }

        /** Whether item {@code index} is readable. */
        public boolean pollin(int index) {
            return index < p.size() && p.isReadable(index);
        }

        /** Whether item {@code index} is writable. */
        public boolean pollout(int index) {
            return index < p.size() && p.isWritable(index);
        }

        /** Whether item {@code index} reported an error. */
        public boolean pollerr(int index) {
            return index < p.size() && p.isError(index);
        }

        /** The socket at {@code index}. */
        public Socket getSocket(int index) {
            return index >= 0 && index < items.size() ? items.get(index).socket : null;
        }

        /** The number of items. */
        public int getSize() {
            return p.size();
        }

        /** The next free index. */
        public int getNext() {
            return p.size();
        }

        @Override
        public void close() {
            p.close();
            items.clear();
        }
    }

    // ---------------------------------------------------------------------------------------

    /** CURVE keys (JeroMQ's ZMQ.Curve). */
    public static class Curve {
        /** Bytes of a raw key. */
        public static final int KEY_SIZE = 32;
        /** Characters of a Z85 key. */
        public static final int KEY_SIZE_Z85 = 40;

        /** A new key pair in Z85. */
        public static KeyPair generateKeyPair() {
            io.oxmq.Curve.KeyPair kp = io.oxmq.Curve.keyPair();
            return new KeyPair(kp.publicKey(), kp.secretKey());
        }

        /** Z85 decoding. */
        public static byte[] z85Decode(String key) {
            return io.oxmq.Curve.z85Decode(key);
        }

        /** Z85 encoding. */
        public static String z85Encode(byte[] key) {
            return io.oxmq.Curve.z85Encode(key);
        }

        /** A Z85 key pair. */
        public static class KeyPair {
            /** The public key (Z85). */
            public final String publicKey;
            /** The secret key (Z85). */
            public final String secretKey;

            /** A pair. */
            public KeyPair(String publicKey, String secretKey) {
                this.publicKey = publicKey;
                this.secretKey = secretKey;
            }
        }
    }

    // ---------------------------------------------------------------------------------------

    /** A monitor event (JeroMQ's ZMQ.Event). */
    public static class Event {
        private final int event;
        private final Object value;
        private final String address;

        /** An event. */
        public Event(int event, Object value, String address) {
            this.event = event;
            this.value = value;
            this.address = address;
        }

        /** The event bit. */
        public int getEvent() {
            return event;
        }

        /** The event value. */
        public Object getValue() {
            return value;
        }

        /** The endpoint. */
        public String getAddress() {
            return address;
        }

        /** Receives an event from a monitor PAIR socket (blocking); {@code null} if none. */
        public static Event recv(Socket socket) {
            return recv(socket, 0);
        }

        /** Receives an event with {@code flags}; {@code null} if none. */
        public static Event recv(Socket socket, int flags) {
            byte[] head = socket.recv(flags);
            if (head == null) return null;
            if (head.length < 6 || !socket.hasReceiveMore()) throw new ZMQException("malformed monitor event", ZmqException.EFAULT);
            String addr = socket.recvStr(0);
            ByteBuffer b = ByteBuffer.wrap(head).order(java.nio.ByteOrder.nativeOrder());
            return new Event(b.getShort(0) & 0xFFFF, b.getInt(2), addr);
        }
    }

    private static final Pattern IPV4 = Pattern.compile("tcp://([^:]+):(\\d+)");

    static String hostOf(String ep) {
        Matcher m = IPV4.matcher(ep);
        return m.matches() ? m.group(1) : ep;
    }
}
