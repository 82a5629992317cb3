package io.oxmq;

/**
 * A blocking send, receive or poll ended because its thread was interrupted
 * ({@link Thread#interrupt()}). The thread's interrupt status stays set, as with
 * {@link java.nio.channels.ClosedByInterruptException}; the socket stays usable.
 */
public final class ZmqInterruptedException extends ZmqException {
    private static final long serialVersionUID = 1L;

    /** An interruption of {@code operation}. */
    public ZmqInterruptedException(String operation) {
        super(operation, EINTR);
    }
}
