package io.oxmq;

/**
 * ETERM: the socket's context was closed ({@link Context#close()} or {@link Context#shutdown()}).
 * The socket can do nothing more than be closed; the binding closes it itself when a blocking
 * call ends this way.
 */
public final class TermException extends ZmqException {
    private static final long serialVersionUID = 1L;

    /** An ETERM from {@code operation}. */
    public TermException(String operation) {
        super(operation, ETERM);
    }
}
