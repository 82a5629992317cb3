package org.zeromq;

import io.oxmq.ZmqException;

/** A failed ZeroMQ call with its errno, as in JeroMQ ({@link #getErrorCode()}). */
public class ZMQException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int code;

    /** An exception with {@code errno}. */
    public ZMQException(int errno) {
        super("Errno " + errno);
        this.code = errno;
    }

    /** An exception with a message and {@code errno}. */
    public ZMQException(String message, int errno) {
        super(message);
        this.code = errno;
    }

    /** An exception with a message, {@code errno} and cause. */
    public ZMQException(String message, int errno, Throwable cause) {
        super(message, cause);
        this.code = errno;
    }

    /** The errno. */
    public int getErrorCode() {
        return code;
    }

    static ZMQException of(ZmqException e) {
        return new ZMQException(e.getMessage(), e.errno(), e);
    }

    @Override
    public String toString() {
        return super.toString() + " : " + ZMQ.Error.findByCode(code);
    }
}
