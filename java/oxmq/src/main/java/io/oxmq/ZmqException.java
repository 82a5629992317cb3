package io.oxmq;

/**
 * A failed ZeroMQ call, with the {@code errno} the library reported. Two conditions have their
 * own subclasses because programs handle them differently: {@link AgainException} (EAGAIN: a
 * non-blocking call found nothing to do, or a timeout expired) and {@link TermException}
 * (ETERM: the socket's context was closed). A blocking call interrupted by
 * {@link Thread#interrupt()} throws {@link InterruptedException}'s unchecked counterpart
 * {@link ZmqInterruptedException}.
 */
public class ZmqException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** errno values the binding names (Linux numbering; ZeroMQ's own above 156384712). */
    public static final int EINTR = 4, EAGAIN = 11, EFAULT = 14, EINVAL = 22, ENOTSUP = 95,
            EPROTONOSUPPORT = 93, EADDRINUSE = 98, EADDRNOTAVAIL = 99, ECONNREFUSED = 111,
            EHOSTUNREACH = 113, ENOTSOCK = 88, EMSGSIZE = 90;
    private static final int HAUSNUMERO = 156384712;
    /** ZeroMQ's own errno values. */
    public static final int EFSM = HAUSNUMERO + 51, ENOCOMPATPROTO = HAUSNUMERO + 52,
            ETERM = HAUSNUMERO + 53, EMTHREAD = HAUSNUMERO + 54;

    private final int errno;

    /** An exception for {@code errno} raised by {@code operation}. */
    public ZmqException(String operation, int errno) {
        super(operation + ": " + Zmq.strerror(errno) + " (errno " + errno + ")");
        this.errno = errno;
    }

    /** The errno the library reported. */
    public int errno() {
        return errno;
    }

    /** The exception for {@code errno}: the EAGAIN, ETERM and EINTR ones are subclasses. */
    static ZmqException of(String operation, int errno) {
        return switch (errno) {
            case EAGAIN -> new AgainException(operation);
            case ETERM -> new TermException(operation);
            default -> new ZmqException(operation, errno);
        };
    }
}
