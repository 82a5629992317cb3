package io.oxmq;

/** EAGAIN: a non-blocking operation could not complete now, or a send/receive timeout expired. */
public final class AgainException extends ZmqException {
    private static final long serialVersionUID = 1L;

    /** An EAGAIN from {@code operation}. */
    public AgainException(String operation) {
        super(operation, EAGAIN);
    }
}
