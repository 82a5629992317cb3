package io.oxmq;

/**
 * One socket event from a {@link Monitor}: what happened ({@link #event()}, one of the bit
 * constants here), its value (a file descriptor, an errno or an interval, depending on the
 * event) and the endpoint concerned.
 *
 * @param event the event bit
 * @param value the event's value
 * @param endpoint the endpoint concerned
 */
public record MonitorEvent(int event, int value, String endpoint) {
    /** ZMQ_EVENT_CONNECTED. */ public static final int CONNECTED = 0x0001;
    /** ZMQ_EVENT_CONNECT_DELAYED. */ public static final int CONNECT_DELAYED = 0x0002;
    /** ZMQ_EVENT_CONNECT_RETRIED. */ public static final int CONNECT_RETRIED = 0x0004;
    /** ZMQ_EVENT_LISTENING. */ public static final int LISTENING = 0x0008;
    /** ZMQ_EVENT_BIND_FAILED. */ public static final int BIND_FAILED = 0x0010;
    /** ZMQ_EVENT_ACCEPTED. */ public static final int ACCEPTED = 0x0020;
    /** ZMQ_EVENT_ACCEPT_FAILED. */ public static final int ACCEPT_FAILED = 0x0040;
    /** ZMQ_EVENT_CLOSED. */ public static final int CLOSED = 0x0080;
    /** ZMQ_EVENT_CLOSE_FAILED. */ public static final int CLOSE_FAILED = 0x0100;
    /** ZMQ_EVENT_DISCONNECTED. */ public static final int DISCONNECTED = 0x0200;
    /** ZMQ_EVENT_MONITOR_STOPPED. */ public static final int MONITOR_STOPPED = 0x0400;
    /** ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL. */ public static final int HANDSHAKE_FAILED_NO_DETAIL = 0x0800;
    /** ZMQ_EVENT_HANDSHAKE_SUCCEEDED. */ public static final int HANDSHAKE_SUCCEEDED = 0x1000;
    /** ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL. */ public static final int HANDSHAKE_FAILED_PROTOCOL = 0x2000;
    /** ZMQ_EVENT_HANDSHAKE_FAILED_AUTH. */ public static final int HANDSHAKE_FAILED_AUTH = 0x4000;
    /** ZMQ_EVENT_ALL. */ public static final int ALL = 0xFFFF;

    /** The event's name without the {@code ZMQ_EVENT_} prefix. */
    public String name() {
        return switch (event) {
            case CONNECTED -> "CONNECTED";
            case CONNECT_DELAYED -> "CONNECT_DELAYED";
            case CONNECT_RETRIED -> "CONNECT_RETRIED";
            case LISTENING -> "LISTENING";
            case BIND_FAILED -> "BIND_FAILED";
            case ACCEPTED -> "ACCEPTED";
            case ACCEPT_FAILED -> "ACCEPT_FAILED";
            case CLOSED -> "CLOSED";
            case CLOSE_FAILED -> "CLOSE_FAILED";
            case DISCONNECTED -> "DISCONNECTED";
            case MONITOR_STOPPED -> "MONITOR_STOPPED";
            case HANDSHAKE_FAILED_NO_DETAIL -> "HANDSHAKE_FAILED_NO_DETAIL";
            case HANDSHAKE_SUCCEEDED -> "HANDSHAKE_SUCCEEDED";
            case HANDSHAKE_FAILED_PROTOCOL -> "HANDSHAKE_FAILED_PROTOCOL";
            case HANDSHAKE_FAILED_AUTH -> "HANDSHAKE_FAILED_AUTH";
            default -> "0x" + Integer.toHexString(event);
        };
    }
}
