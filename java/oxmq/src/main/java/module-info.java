/**
 * oxmq's Java binding: ZeroMQ sockets over oxmq's C ABI ({@code libzmq.so.5}), called through
 * the Foreign Function &amp; Memory API. No JNI and no C compiler are involved; the library the
 * jar carries is extracted and loaded on first use (see {@link io.oxmq.Context}).
 */
module io.oxmq {
    exports io.oxmq;
    // The guard Socket, Frame and Poller use, for io.oxmq.wiring's handle; not an API.
    exports io.oxmq.internal to io.oxmq.wiring;
}
