package io.oxmq;

/** ZeroMQ socket types, with their {@code ZMQ_*} numbers. */
public enum SocketType {
    /** Exclusive pair. */ PAIR(0),
    /** Publisher. */ PUB(1),
    /** Subscriber. */ SUB(2),
    /** Requester (strict send/receive alternation). */ REQ(3),
    /** Replier. */ REP(4),
    /** Asynchronous requester. */ DEALER(5),
    /** Asynchronous replier addressing peers by routing id. */ ROUTER(6),
    /** Pipeline receiver. */ PULL(7),
    /** Pipeline sender. */ PUSH(8),
    /** Publisher that sees subscriptions. */ XPUB(9),
    /** Subscriber that sends subscriptions as messages. */ XSUB(10),
    /** Raw TCP. */ STREAM(11),
    /** Draft: thread-safe server. */ SERVER(12, true),
    /** Draft: thread-safe client. */ CLIENT(13, true),
    /** Draft: group publisher. */ RADIO(14, true),
    /** Draft: group subscriber. */ DISH(15, true),
    /** Draft: thread-safe fair-queued receiver. */ GATHER(16, true),
    /** Draft: thread-safe load-balanced sender. */ SCATTER(17, true),
    /** Draft: raw udp datagrams as [address, body] messages; not thread-safe, as libzmq's. */ DGRAM(18),
    /** Draft: peer. */ PEER(19, true),
    /** Draft: thread-safe pair. */ CHANNEL(20, true);

    /** The {@code ZMQ_*} number. */
    public final int value;
    private final boolean threadSafe;

    SocketType(int value) {
        this(value, false);
    }

    SocketType(int value, boolean threadSafe) {
        this.value = value;
        this.threadSafe = threadSafe;
    }

    /** Whether several threads may use a socket of this type at once (the draft types). */
    public boolean isThreadSafe() {
        return threadSafe;
    }

    /** The type with {@code ZMQ_*} number {@code value}. */
    public static SocketType of(int value) {
        for (SocketType t : values()) {
            if (t.value == value) return t;
        }
        throw new IllegalArgumentException("no socket type " + value);
    }
}
