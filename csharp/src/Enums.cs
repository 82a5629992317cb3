// Socket types, send/receive flags, option numbers, poll and monitor event masks: libzmq's
// numbers, as enums.

using System;

namespace ZeroMQ
{
    /// <summary>ZeroMQ socket types (libzmq's numbers).</summary>
    public enum ZSocketType
    {
        /// <summary>Exclusive pair.</summary>
        PAIR = 0,
        /// <summary>Publisher: sends to every matching subscriber.</summary>
        PUB = 1,
        /// <summary>Subscriber: receives the topics it subscribed to.</summary>
        SUB = 2,
        /// <summary>Request (client): send, receive, send, ...</summary>
        REQ = 3,
        /// <summary>Reply (server): receive, send, receive, ...</summary>
        REP = 4,
        /// <summary>Asynchronous request: load-balances sends, fair-queues receives.</summary>
        DEALER = 5,
        /// <summary>Asynchronous reply: routes by the peer's routing id.</summary>
        ROUTER = 6,
        /// <summary>Pipeline sink: fair-queues from pushers.</summary>
        PULL = 7,
        /// <summary>Pipeline source: load-balances to pullers.</summary>
        PUSH = 8,
        /// <summary>Publisher that receives subscriptions as messages.</summary>
        XPUB = 9,
        /// <summary>Subscriber that sends subscriptions as messages.</summary>
        XSUB = 10,
        /// <summary>Raw TCP.</summary>
        STREAM = 11,
        /// <summary>Draft, thread-safe: replies to each client by the routing id its messages carry (<see cref="ZFrame.RoutingId"/>).</summary>
        SERVER = 12,
        /// <summary>Draft, thread-safe: a SERVER's client, single-part messages.</summary>
        CLIENT = 13,
        /// <summary>Draft, thread-safe: publishes to groups (<see cref="ZFrame.Group"/>).</summary>
        RADIO = 14,
        /// <summary>Draft, thread-safe: receives the groups it joined (<see cref="ZSocket.Join"/>).</summary>
        DISH = 15,
        /// <summary>Draft, thread-safe: fair-queues from SCATTERs.</summary>
        GATHER = 16,
        /// <summary>Draft, thread-safe: load-balances to GATHERs.</summary>
        SCATTER = 17,
        /// <summary>Draft: raw udp datagrams as [address, body] messages (not thread-safe).</summary>
        DGRAM = 18,
        /// <summary>Draft, thread-safe: peers addressed by routing id (<see cref="ZSocket.ConnectPeer"/>).</summary>
        PEER = 19,
        /// <summary>Draft, thread-safe: an exclusive pair.</summary>
        CHANNEL = 20,
    }

    /// <summary>Flags of send and receive calls.</summary>
    [Flags]
    public enum ZSocketFlags
    {
        /// <summary>Block (up to the socket's timeout).</summary>
        None = 0,
        /// <summary>Do not block: EAGAIN when the call cannot complete now.</summary>
        DontWait = 1,
        /// <summary>More frames of the same message follow (send only).</summary>
        More = 2,
    }

    /// <summary>Socket option numbers (libzmq's <c>ZMQ_*</c> names).</summary>
    public enum ZSocketOption
    {
#pragma warning disable 1591 // the names are libzmq's, documented in zmq_setsockopt(3)
        AFFINITY = 4, IDENTITY = 5, SUBSCRIBE = 6, UNSUBSCRIBE = 7, RATE = 8, RECOVERY_IVL = 9,
        SNDBUF = 11, RCVBUF = 12, RCVMORE = 13, FD = 14, EVENTS = 15, TYPE = 16, LINGER = 17,
        RECONNECT_IVL = 18, BACKLOG = 19, RECONNECT_IVL_MAX = 21, MAXMSGSIZE = 22, SNDHWM = 23,
        RCVHWM = 24, MULTICAST_HOPS = 25, RCVTIMEO = 27, SNDTIMEO = 28, IPV4ONLY = 31,
        LAST_ENDPOINT = 32, ROUTER_MANDATORY = 33, TCP_KEEPALIVE = 34, TCP_KEEPALIVE_CNT = 35,
        TCP_KEEPALIVE_IDLE = 36, TCP_KEEPALIVE_INTVL = 37, IMMEDIATE = 39, XPUB_VERBOSE = 40,
        ROUTER_RAW = 41, IPV6 = 42, MECHANISM = 43, PLAIN_SERVER = 44, PLAIN_USERNAME = 45,
        PLAIN_PASSWORD = 46, CURVE_SERVER = 47, CURVE_PUBLICKEY = 48, CURVE_SECRETKEY = 49,
        CURVE_SERVERKEY = 50, PROBE_ROUTER = 51, REQ_CORRELATE = 52, REQ_RELAXED = 53,
        CONFLATE = 54, ZAP_DOMAIN = 55, ROUTER_HANDOVER = 56, TOS = 57, CONNECT_ROUTING_ID = 61,
        HANDSHAKE_IVL = 66, XPUB_NODROP = 69, XPUB_MANUAL = 71, XPUB_WELCOME_MSG = 72,
        STREAM_NOTIFY = 73, INVERT_MATCHING = 74, HEARTBEAT_IVL = 75, HEARTBEAT_TTL = 76,
        HEARTBEAT_TIMEOUT = 77, XPUB_VERBOSER = 78, CONNECT_TIMEOUT = 79, TCP_MAXRT = 80,
        // Draft: one "X-Name:value" property sent in the handshake (ZFrame.GetOption at the peer).
        METADATA = 95,
        // Draft: the TLS of wss:// and tls:// (write only; PEM text, the host name, a flag).
        WSS_KEY_PEM = 103, WSS_CERT_PEM = 104, WSS_TRUST_PEM = 105, WSS_HOSTNAME = 106,
        WSS_TRUST_SYSTEM = 107,
        // oxmq's own options (zmq.h's ZMQ_OXMQ_*): connects that follow DNS, the metrics name.
        OXMQ_DNS_FOLLOW = 0x4f580010, OXMQ_DNS_IVL = 0x4f580011, OXMQ_NAME = 0x4f580012,
#pragma warning restore 1591
    }

    /// <summary>Poll events (<c>ZMQ_POLLIN</c>, ...), also the value of <see cref="ZSocket.Events"/>.</summary>
    [Flags]
    public enum ZPollEvents : short
    {
        /// <summary>Nothing.</summary>
        None = 0,
        /// <summary>A message can be received without blocking.</summary>
        In = 1,
        /// <summary>A message can be sent without blocking.</summary>
        Out = 2,
        /// <summary>An error condition (plain descriptors only).</summary>
        Err = 4,
    }

    /// <summary>Socket monitor events (<c>ZMQ_EVENT_*</c>).</summary>
    [Flags]
    public enum ZMonitorEvents
    {
#pragma warning disable 1591 // libzmq's names, documented in zmq_socket_monitor(3)
        Connected = 0x0001, ConnectDelayed = 0x0002, ConnectRetried = 0x0004, Listening = 0x0008,
        BindFailed = 0x0010, Accepted = 0x0020, AcceptFailed = 0x0040, Closed = 0x0080,
        CloseFailed = 0x0100, Disconnected = 0x0200, MonitorStopped = 0x0400,
        HandshakeFailedNoDetail = 0x0800, HandshakeSucceeded = 0x1000,
        HandshakeFailedProtocol = 0x2000, HandshakeFailedAuth = 0x4000,
        AllEvents = 0xFFFF,
#pragma warning restore 1591
    }
}
