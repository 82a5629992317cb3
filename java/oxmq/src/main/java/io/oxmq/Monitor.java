package io.oxmq;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Receives a socket's events ({@code zmq_socket_monitor}) on a PAIR socket of its own. Make one
 * with {@link #of(Socket, int)}, read events with {@link #next(int)}, close it when done.
 */
public final class Monitor implements AutoCloseable {
    private static final AtomicLong SEQ = new AtomicLong();
    private final Socket monitored;
    private final Socket pair;

    private Monitor(Socket monitored, Socket pair) {
        this.monitored = monitored;
        this.pair = pair;
    }

    /** Starts monitoring {@code socket} for the {@link MonitorEvent} bits in {@code events}. */
    public static Monitor of(Socket socket, int events) {
        String ep = "inproc://oxmq.monitor." + ProcessHandle.current().pid() + "." + SEQ.incrementAndGet();
        socket.monitor(ep, events);
        Socket pair = socket.context().socket(SocketType.PAIR);
        try {
            pair.connect(ep);
        } catch (RuntimeException e) {
            pair.close();
            throw e;
        }
        return new Monitor(socket, pair);
    }

    /** The PAIR socket events arrive on (to register in a {@link Poller}). */
    public Socket socket() {
        return pair;
    }

    /** The next event, waiting at most {@code timeoutMs} (-1: no limit); {@code null} on timeout. */
    public MonitorEvent next(int timeoutMs) {
        pair.set(SocketOption.RCVTIMEO, timeoutMs);
        byte[] head;
        try {
            head = pair.recv(0);
        } catch (AgainException e) {
            return null;
        }
        if (head.length < 6 || !pair.hasReceiveMore()) {
            throw new IllegalStateException("malformed monitor event (" + head.length + " bytes)");
        }
        pair.set(SocketOption.RCVTIMEO, -1);
        byte[] ep = pair.recv(0);
        ByteBuffer b = ByteBuffer.wrap(head).order(ByteOrder.nativeOrder());
        int event = b.getShort(0) & 0xFFFF;
        int value = b.getInt(2);
        return new MonitorEvent(event, value, new String(ep, StandardCharsets.UTF_8));
    }

    /** Stops monitoring (when the monitored socket is still open) and closes the PAIR socket. */
    @Override
    public void close() {
        if (!monitored.isClosed()) {
            try {
                monitored.monitor(null, 0);
            } catch (RuntimeException ignored) {
                // the monitored socket is busy or its context gone: closing the pair suffices
            }
        }
        pair.close();
    }
}
