package io.oxmq;

/**
 * A socket option with its Java type, for {@link Socket#set(SocketOption, Object)} and
 * {@link Socket#get(SocketOption)}. Durations are in milliseconds (-1: infinite), as in libzmq.
 * CURVE keys are 40-character Z85 strings here (see {@link Curve}).
 *
 * @param <T> the option's Java type
 */
public final class SocketOption<T> {
    enum Kind { INT, LONG, BOOL, BYTES, STRING, KEY }

    final String name;
    final int id;
    final Kind kind;
    final boolean readable;
    final boolean writable;

    private SocketOption(String name, int id, Kind kind, boolean readable, boolean writable) {
        this.name = name;
        this.id = id;
        this.kind = kind;
        this.readable = readable;
        this.writable = writable;
    }

    private static SocketOption<Integer> i(String n, int id) { return new SocketOption<>(n, id, Kind.INT, true, true); }
    private static SocketOption<Long> l(String n, int id) { return new SocketOption<>(n, id, Kind.LONG, true, true); }
    private static SocketOption<Boolean> b(String n, int id) { return new SocketOption<>(n, id, Kind.BOOL, true, true); }
    private static SocketOption<Boolean> bw(String n, int id) { return new SocketOption<>(n, id, Kind.BOOL, false, true); }
    private static SocketOption<byte[]> bytes(String n, int id) { return new SocketOption<>(n, id, Kind.BYTES, true, true); }
    private static SocketOption<byte[]> bytesW(String n, int id) { return new SocketOption<>(n, id, Kind.BYTES, false, true); }
    private static SocketOption<String> sw(String n, int id) { return new SocketOption<>(n, id, Kind.STRING, false, true); }
    private static SocketOption<String> s(String n, int id) { return new SocketOption<>(n, id, Kind.STRING, true, true); }
    private static SocketOption<String> key(String n, int id) { return new SocketOption<>(n, id, Kind.KEY, true, true); }

    /** ZMQ_AFFINITY. */ public static final SocketOption<Long> AFFINITY = l("AFFINITY", 4);
    /** ZMQ_ROUTING_ID (ZMQ_IDENTITY). */ public static final SocketOption<byte[]> ROUTING_ID = bytes("ROUTING_ID", 5);
    /** ZMQ_SUBSCRIBE (write only). */ public static final SocketOption<byte[]> SUBSCRIBE = bytesW("SUBSCRIBE", 6);
    /** ZMQ_UNSUBSCRIBE (write only). */ public static final SocketOption<byte[]> UNSUBSCRIBE = bytesW("UNSUBSCRIBE", 7);
    /** ZMQ_SNDBUF (bytes). */ public static final SocketOption<Integer> SNDBUF = i("SNDBUF", 11);
    /** ZMQ_RCVBUF (bytes). */ public static final SocketOption<Integer> RCVBUF = i("RCVBUF", 12);
    /** ZMQ_RCVMORE (read only). */ public static final SocketOption<Boolean> RCVMORE = new SocketOption<>("RCVMORE", 13, Kind.BOOL, true, false);
    /** ZMQ_EVENTS (read only: POLLIN|POLLOUT). */ public static final SocketOption<Integer> EVENTS = new SocketOption<>("EVENTS", 15, Kind.INT, true, false);
    /** ZMQ_TYPE (read only). */ public static final SocketOption<Integer> TYPE = new SocketOption<>("TYPE", 16, Kind.INT, true, false);
    /** ZMQ_LINGER (ms). */ public static final SocketOption<Integer> LINGER = i("LINGER", 17);
    /** ZMQ_RECONNECT_IVL (ms). */ public static final SocketOption<Integer> RECONNECT_IVL = i("RECONNECT_IVL", 18);
    /** ZMQ_BACKLOG. */ public static final SocketOption<Integer> BACKLOG = i("BACKLOG", 19);
    /** ZMQ_RECONNECT_IVL_MAX (ms). */ public static final SocketOption<Integer> RECONNECT_IVL_MAX = i("RECONNECT_IVL_MAX", 21);
    /** ZMQ_MAXMSGSIZE (bytes, -1: no limit). */ public static final SocketOption<Long> MAXMSGSIZE = l("MAXMSGSIZE", 22);
    /** ZMQ_SNDHWM (messages). */ public static final SocketOption<Integer> SNDHWM = i("SNDHWM", 23);
    /** ZMQ_RCVHWM (messages). */ public static final SocketOption<Integer> RCVHWM = i("RCVHWM", 24);
    /** ZMQ_RCVTIMEO (ms, -1: block). Kept by the binding, which waits in slices. */ public static final SocketOption<Integer> RCVTIMEO = i("RCVTIMEO", 27);
    /** ZMQ_SNDTIMEO (ms, -1: block). Kept by the binding, which waits in slices. */ public static final SocketOption<Integer> SNDTIMEO = i("SNDTIMEO", 28);
    /** ZMQ_LAST_ENDPOINT (read only): the endpoint of the last bind, with the port chosen for "*". */
    public static final SocketOption<String> LAST_ENDPOINT = new SocketOption<>("LAST_ENDPOINT", 32, Kind.STRING, true, false);
    /** ZMQ_ROUTER_MANDATORY (write only). */ public static final SocketOption<Boolean> ROUTER_MANDATORY = bw("ROUTER_MANDATORY", 33);
    /** ZMQ_TCP_KEEPALIVE. */ public static final SocketOption<Integer> TCP_KEEPALIVE = i("TCP_KEEPALIVE", 34);
    /** ZMQ_IMMEDIATE. */ public static final SocketOption<Boolean> IMMEDIATE = b("IMMEDIATE", 39);
    /** ZMQ_XPUB_VERBOSE (write only). */ public static final SocketOption<Boolean> XPUB_VERBOSE = bw("XPUB_VERBOSE", 40);
    /** ZMQ_IPV6. */ public static final SocketOption<Boolean> IPV6 = b("IPV6", 42);
    /** ZMQ_MECHANISM (read only: 0 NULL, 1 PLAIN, 2 CURVE). */ public static final SocketOption<Integer> MECHANISM = new SocketOption<>("MECHANISM", 43, Kind.INT, true, false);
    /** ZMQ_PLAIN_SERVER. */ public static final SocketOption<Boolean> PLAIN_SERVER = b("PLAIN_SERVER", 44);
    /** ZMQ_PLAIN_USERNAME. */ public static final SocketOption<String> PLAIN_USERNAME = s("PLAIN_USERNAME", 45);
    /** ZMQ_PLAIN_PASSWORD. */ public static final SocketOption<String> PLAIN_PASSWORD = s("PLAIN_PASSWORD", 46);
    /** ZMQ_CURVE_SERVER. */ public static final SocketOption<Boolean> CURVE_SERVER = b("CURVE_SERVER", 47);
    /** ZMQ_CURVE_PUBLICKEY (Z85). */ public static final SocketOption<String> CURVE_PUBLICKEY = key("CURVE_PUBLICKEY", 48);
    /** ZMQ_CURVE_SECRETKEY (Z85). */ public static final SocketOption<String> CURVE_SECRETKEY = key("CURVE_SECRETKEY", 49);
    /** ZMQ_CURVE_SERVERKEY (Z85). */ public static final SocketOption<String> CURVE_SERVERKEY = key("CURVE_SERVERKEY", 50);
    /** ZMQ_PROBE_ROUTER (write only). */ public static final SocketOption<Boolean> PROBE_ROUTER = bw("PROBE_ROUTER", 51);
    /** ZMQ_REQ_CORRELATE (write only). */ public static final SocketOption<Boolean> REQ_CORRELATE = bw("REQ_CORRELATE", 52);
    /** ZMQ_REQ_RELAXED (write only). */ public static final SocketOption<Boolean> REQ_RELAXED = bw("REQ_RELAXED", 53);
    /** ZMQ_CONFLATE. */ public static final SocketOption<Boolean> CONFLATE = b("CONFLATE", 54);
    /** ZMQ_ZAP_DOMAIN. */ public static final SocketOption<String> ZAP_DOMAIN = s("ZAP_DOMAIN", 55);
    /** ZMQ_ROUTER_HANDOVER (write only). */ public static final SocketOption<Boolean> ROUTER_HANDOVER = bw("ROUTER_HANDOVER", 56);
    /** ZMQ_HANDSHAKE_IVL (ms). */ public static final SocketOption<Integer> HANDSHAKE_IVL = i("HANDSHAKE_IVL", 66);
    /** ZMQ_XPUB_NODROP (write only). */ public static final SocketOption<Boolean> XPUB_NODROP = bw("XPUB_NODROP", 69);
    /** ZMQ_HEARTBEAT_IVL (ms). */ public static final SocketOption<Integer> HEARTBEAT_IVL = i("HEARTBEAT_IVL", 75);
    /** ZMQ_HEARTBEAT_TTL (ms). */ public static final SocketOption<Integer> HEARTBEAT_TTL = i("HEARTBEAT_TTL", 76);
    /** ZMQ_HEARTBEAT_TIMEOUT (ms). */ public static final SocketOption<Integer> HEARTBEAT_TIMEOUT = i("HEARTBEAT_TIMEOUT", 77);
    /** ZMQ_CONNECT_TIMEOUT (ms). */ public static final SocketOption<Integer> CONNECT_TIMEOUT = i("CONNECT_TIMEOUT", 79);
    /** ZMQ_RATE (kbit/s, multicast). */ public static final SocketOption<Integer> RATE = i("RATE", 8);
    /** ZMQ_RECOVERY_IVL (ms, multicast). */ public static final SocketOption<Integer> RECOVERY_IVL = i("RECOVERY_IVL", 9);
    /** ZMQ_MULTICAST_HOPS. */ public static final SocketOption<Integer> MULTICAST_HOPS = i("MULTICAST_HOPS", 25);
    /** ZMQ_TCP_KEEPALIVE_CNT (-1: the system's). */ public static final SocketOption<Integer> TCP_KEEPALIVE_CNT = i("TCP_KEEPALIVE_CNT", 35);
    /** ZMQ_TCP_KEEPALIVE_IDLE (s, -1: the system's). */ public static final SocketOption<Integer> TCP_KEEPALIVE_IDLE = i("TCP_KEEPALIVE_IDLE", 36);
    /** ZMQ_TCP_KEEPALIVE_INTVL (s, -1: the system's). */ public static final SocketOption<Integer> TCP_KEEPALIVE_INTVL = i("TCP_KEEPALIVE_INTVL", 37);
    /** ZMQ_ROUTER_RAW (write only). */ public static final SocketOption<Boolean> ROUTER_RAW = bw("ROUTER_RAW", 41);
    /** ZMQ_TOS (IP type of service). */ public static final SocketOption<Integer> TOS = i("TOS", 57);
    /** ZMQ_CONNECT_ROUTING_ID (write only: the routing id of the next connection). */ public static final SocketOption<byte[]> CONNECT_ROUTING_ID = bytesW("CONNECT_ROUTING_ID", 61);
    /** ZMQ_SOCKS_PROXY (host:port). */ public static final SocketOption<String> SOCKS_PROXY = s("SOCKS_PROXY", 68);
    /** ZMQ_XPUB_MANUAL (write only). */ public static final SocketOption<Boolean> XPUB_MANUAL = bw("XPUB_MANUAL", 71);
    /** ZMQ_XPUB_VERBOSER (write only). */ public static final SocketOption<Boolean> XPUB_VERBOSER = bw("XPUB_VERBOSER", 78);
    /** ZMQ_MULTICAST_LOOP. */ public static final SocketOption<Boolean> MULTICAST_LOOP = b("MULTICAST_LOOP", 96);
    /** ZMQ_ROUTER_NOTIFY (draft: ZMQ_NOTIFY_CONNECT 1 | ZMQ_NOTIFY_DISCONNECT 2). */ public static final SocketOption<Integer> ROUTER_NOTIFY = i("ROUTER_NOTIFY", 97);
    /** ZMQ_RECONNECT_STOP (draft: a mask of CONN_REFUSED 1, HANDSHAKE_FAILED 2, AFTER_DISCONNECT 4). */ public static final SocketOption<Integer> RECONNECT_STOP = i("RECONNECT_STOP", 109);
    /** ZMQ_HELLO_MSG (draft, write only: the first message on every new connection). */ public static final SocketOption<byte[]> HELLO_MSG = bytesW("HELLO_MSG", 110);
    /** ZMQ_DISCONNECT_MSG (draft, write only: received when a peer leaves). */ public static final SocketOption<byte[]> DISCONNECT_MSG = bytesW("DISCONNECT_MSG", 111);
    /** ZMQ_WSS_KEY_PEM (draft, write only: the private key of wss:// and tls://, PEM). */ public static final SocketOption<String> WSS_KEY_PEM = sw("WSS_KEY_PEM", 103);
    /** ZMQ_WSS_CERT_PEM (draft, write only: the certificate chain presented, PEM). */ public static final SocketOption<String> WSS_CERT_PEM = sw("WSS_CERT_PEM", 104);
    /** ZMQ_WSS_TRUST_PEM (draft, write only: trust anchors, PEM; a server with them requires client certificates). */ public static final SocketOption<String> WSS_TRUST_PEM = sw("WSS_TRUST_PEM", 105);
    /** ZMQ_WSS_HOSTNAME (draft, write only: the name the server's certificate must carry). */ public static final SocketOption<String> WSS_HOSTNAME = sw("WSS_HOSTNAME", 106);
    /** ZMQ_WSS_TRUST_SYSTEM (draft, write only: trust the system's anchors too). */ public static final SocketOption<Boolean> WSS_TRUST_SYSTEM = bw("WSS_TRUST_SYSTEM", 107);
    /** ZMQ_METADATA (draft, write only: one "X-Name:value" property sent in the handshake; the peer
     *  reads it with {@link Frame#property}). */ public static final SocketOption<String> METADATA = sw("METADATA", 95);
    /** ZMQ_THREAD_SAFE (read only). */ public static final SocketOption<Boolean> THREAD_SAFE = new SocketOption<>("THREAD_SAFE", 81, Kind.BOOL, true, false);

    /**
     * ZMQ_OXMQ_DNS_FOLLOW (oxmq only): a tcp connect to a host name made while this is true
     * connects to every address the name resolves to, as one endpoint the socket's pattern
     * spreads over, and follows the name (looked up every {@link #OXMQ_DNS_IVL} and whenever
     * a connection is lost): new addresses are connected, addresses that left are drained and
     * disconnected. False (the default) is libzmq's behaviour. See zmq.h.
     */
    public static final SocketOption<Boolean> OXMQ_DNS_FOLLOW = b("OXMQ_DNS_FOLLOW", 0x4f580010);
    /** ZMQ_OXMQ_DNS_IVL (oxmq only): ms between lookups of a followed name, 100 to 86400000 (30000). */
    public static final SocketOption<Integer> OXMQ_DNS_IVL = i("OXMQ_DNS_IVL", 0x4f580011);
    /**
     * ZMQ_OXMQ_NAME (oxmq only): the socket's name in the metrics ({@link Context#metrics()}),
     * at most 64 letters, digits and {@code _ - . : /}; empty for none.
     */
    public static final SocketOption<String> OXMQ_NAME = s("OXMQ_NAME", 0x4f580012);

    /** The option's name without the {@code ZMQ_} prefix. */
    public String name() {
        return name;
    }

    /** The {@code ZMQ_*} number. */
    public int id() {
        return id;
    }

    @Override
    public String toString() {
        return "ZMQ_" + name;
    }
}
