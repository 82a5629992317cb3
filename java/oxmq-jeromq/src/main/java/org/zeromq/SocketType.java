package org.zeromq;

/** Socket types, as JeroMQ's {@code org.zeromq.SocketType}. */
public enum SocketType {
    /** PAIR. */ PAIR(0), /** PUB. */ PUB(1), /** SUB. */ SUB(2), /** REQ. */ REQ(3), /** REP. */ REP(4),
    /** DEALER. */ DEALER(5), /** ROUTER. */ ROUTER(6), /** PULL. */ PULL(7), /** PUSH. */ PUSH(8),
    /** XPUB. */ XPUB(9), /** XSUB. */ XSUB(10), /** STREAM. */ STREAM(11), /** SERVER. */ SERVER(12),
    /** CLIENT. */ CLIENT(13), /** RADIO. */ RADIO(14), /** DISH. */ DISH(15), /** CHANNEL. */ CHANNEL(20),
    /** PEER. */ PEER(19), /** RAW. */ RAW(18), /** SCATTER. */ SCATTER(17), /** GATHER. */ GATHER(16);

    /** The ZMQ_* number. */
    public final int type;

    SocketType(int type) {
        this.type = type;
    }

    /** The ZMQ_* number. */
    public int type() {
        return type;
    }

    /** The type with number {@code baseType}. */
    public static SocketType type(int baseType) {
        for (SocketType t : values()) if (t.type == baseType) return t;
        throw new IllegalArgumentException("no socket type " + baseType);
    }

    io.oxmq.SocketType oxmq() {
        return this == RAW ? io.oxmq.SocketType.DGRAM : io.oxmq.SocketType.of(type);
    }
}
