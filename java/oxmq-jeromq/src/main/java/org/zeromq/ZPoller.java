package org.zeromq;

import java.io.Closeable;
import java.nio.channels.SelectableChannel;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

import io.oxmq.ZmqException;
import io.oxmq.ZmqInterruptedException;

/**
 * JeroMQ's ZPoller on oxmq: sockets registered with an event mask and, optionally, a handler;
 * {@link #poll} waits for any of them, then calls the handler (or the global one) of each
 * registration whose socket has one of its events, and the {@code readable}/{@code writable}
 * /{@code error} queries answer for the last poll. A socket may be registered several times, with
 * different handlers and masks; it is polled once, for all their events together.
 *
 * <p>Java channels ({@link SelectableChannel}) cannot be registered: oxmq polls in native code,
 * which a channel does not reach. {@link EventsHandler} keeps JeroMQ's shape, channel method
 * included, so handlers written for JeroMQ compile unchanged.
 *
 * <p>Like JeroMQ's, a ZPoller is used by one thread at a time.
 */
public class ZPoller implements Closeable {
    /** Readable. */
    public static final int POLLIN = ZMQ.Poller.POLLIN;
    /** Writable. */
    public static final int POLLOUT = ZMQ.Poller.POLLOUT;
    /** Error. */
    public static final int POLLERR = ZMQ.Poller.POLLERR;
    /** Short for {@link #POLLIN}. */
    public static final int IN = POLLIN;
    /** Short for {@link #POLLOUT}. */
    public static final int OUT = POLLOUT;
    /** Short for {@link #POLLERR}. */
    public static final int ERR = POLLERR;
    /** Same as {@link #POLLIN}. */
    public static final int READABLE = POLLIN;
    /** Same as {@link #POLLOUT}. */
    public static final int WRITABLE = POLLOUT;

    /** Called after a poll for a registration whose socket has events. */
    public interface EventsHandler {
        /**
         * @param socket the socket
         * @param events the events that occurred, within the registration's mask
         * @return false to make {@link ZPoller#poll} return -1 (the remaining handlers are not called)
         */
        boolean events(ZMQ.Socket socket, int events);

        /**
         * For a Java channel: never called on oxmq, which polls sockets only.
         *
         * @param channel the channel
         * @param events the events
         * @return as for sockets
         */
        boolean events(SelectableChannel channel, int events);
    }

    private static final class Registration {
        final ZMQ.Socket socket;
        final EventsHandler handler; // null: the global handler
        final int events;

        Registration(ZMQ.Socket socket, EventsHandler handler, int events) {
            this.socket = socket;
            this.handler = handler;
            this.events = events;
        }
    }

    private final List<Registration> registrations = new ArrayList<>();
    private final Map<ZMQ.Socket, Integer> ready = new IdentityHashMap<>(); // last poll's events
    private io.oxmq.Poller poller; // rebuilt when the registrations change
    private List<ZMQ.Socket> polled = new ArrayList<>();
    private EventsHandler globalHandler;

    /** A poller for sockets of {@code context}. */
    public ZPoller(ZContext context) {
    }

    /** A new, empty poller with {@code poller}'s global handler. */
    public ZPoller(ZPoller poller) {
        this.globalHandler = poller.globalHandler;
    }

    /** The handler of registrations made without one. */
    public void setGlobalHandler(EventsHandler handler) {
        this.globalHandler = handler;
    }

    /** The handler of registrations made without one. */
    public EventsHandler getGlobalHandler() {
        return globalHandler;
    }

    /** Registers {@code socket} for {@code events}, with a function as its handler. */
    public final boolean register(ZMQ.Socket socket, BiFunction<ZMQ.Socket, Integer, Boolean> handler, int events) {
        return register(socket, new EventsHandler() {
            @Override
            public boolean events(ZMQ.Socket s, int ev) {
                return handler.apply(s, ev);
            }

            @Override
            public boolean events(SelectableChannel channel, int ev) {
                return true;
            }
        }, events);
    }

    /** Registers {@code socket} for {@code events} with {@code handler} (null: the global one). */
    public final boolean register(ZMQ.Socket socket, EventsHandler handler, int events) {
        if (socket == null) return false;
        registrations.add(new Registration(socket, handler, events));
        poller = null;
        return true;
    }

    /** Registers {@code socket} for POLLIN, POLLOUT and POLLERR with {@code handler}. */
    public final boolean register(ZMQ.Socket socket, EventsHandler handler) {
        return register(socket, handler, POLLIN | POLLOUT | POLLERR);
    }

    /** Registers {@code socket} for {@code events}, handled by the global handler if any. */
    public final boolean register(ZMQ.Socket socket, int events) {
        return register(socket, (EventsHandler) null, events);
    }

    /** The number of registrations. */
    public int registered() {
        return registrations.size();
    }

    /** Removes every registration of {@code socket}; false when it had none. */
    public final synchronized boolean unregister(Object socket) {
        boolean removed = registrations.removeIf(r -> r.socket == socket);
        if (removed) {
            poller = null;
            ready.remove(socket);
        }
        return removed;
    }

    /**
     * Waits up to {@code timeout} ms (-1: no limit) for an event on a registered socket, then
     * calls the handlers of the registrations that have events.
     *
     * @return the number of sockets with events, or -1 when the wait was interrupted or a
     *     handler returned false
     */
    public int poll(long timeout) {
        if (poller == null) rebuild();
        ready.clear();
        int rc;
        try {
            rc = poller.poll(timeout);
        } catch (ZmqInterruptedException e) {
            return -1;
        } catch (ZmqException e) {
            throw ZMQException.of(e);
        }
        for (int i = 0; i < polled.size(); i++) {
            int ev = (poller.isReadable(i) ? POLLIN : 0) | (poller.isWritable(i) ? POLLOUT : 0)
                    | (poller.isError(i) ? POLLERR : 0);
            if (ev != 0) ready.put(polled.get(i), ev);
        }
        return dispatch() ? rc : -1;
    }

    /** Calls the handlers again for the events of the last poll; false when one returned false. */
    public boolean dispatch() {
        // a snapshot: handlers may register and unregister
        for (Registration r : registrations.toArray(new Registration[0])) {
            EventsHandler h = r.handler != null ? r.handler : globalHandler;
            if (h == null) continue;
            int ev = ready.getOrDefault(r.socket, 0) & r.events;
            if (ev != 0 && !h.events(r.socket, ev)) return false;
        }
        return true;
    }

    private void rebuild() {
        if (poller != null) poller.close();
        Map<ZMQ.Socket, Integer> masks = new IdentityHashMap<>();
        List<ZMQ.Socket> order = new ArrayList<>();
        for (Registration r : registrations) {
            if (!masks.containsKey(r.socket)) order.add(r.socket);
            masks.merge(r.socket, r.events, (a, b) -> a | b);
        }
        io.oxmq.Poller p = new io.oxmq.Poller(Math.max(1, order.size()));
        for (ZMQ.Socket s : order) p.register(s.s, masks.get(s));
        poller = p;
        polled = order;
    }

    private boolean has(Object socket, int event) {
        return socket instanceof ZMQ.Socket && (ready.getOrDefault(socket, 0) & event) != 0;
    }

    /** Whether {@code socket} was readable at the last poll. */
    public boolean isReadable(ZMQ.Socket socket) { return has(socket, POLLIN); }
    /** Whether {@code socket} was readable at the last poll. */
    public boolean readable(ZMQ.Socket socket) { return has(socket, POLLIN); }
    /** Whether {@code socket} (a ZMQ.Socket) was readable at the last poll. */
    public boolean readable(Object socket) { return has(socket, POLLIN); }
    /** Whether {@code socket} was readable at the last poll. */
    public boolean pollin(ZMQ.Socket socket) { return has(socket, POLLIN); }
    /** Whether {@code socket} was writable at the last poll. */
    public boolean isWritable(ZMQ.Socket socket) { return has(socket, POLLOUT); }
    /** Whether {@code socket} was writable at the last poll. */
    public boolean writable(ZMQ.Socket socket) { return has(socket, POLLOUT); }
    /** Whether {@code socket} (a ZMQ.Socket) was writable at the last poll. */
    public boolean writable(Object socket) { return has(socket, POLLOUT); }
    /** Whether {@code socket} was writable at the last poll. */
    public boolean pollout(ZMQ.Socket socket) { return has(socket, POLLOUT); }
    /** Whether {@code socket} reported an error at the last poll. */
    public boolean isError(ZMQ.Socket socket) { return has(socket, POLLERR); }
    /** Whether {@code socket} reported an error at the last poll. */
    public boolean error(ZMQ.Socket socket) { return has(socket, POLLERR); }
    /** Whether {@code socket} (a ZMQ.Socket) reported an error at the last poll. */
    public boolean error(Object socket) { return has(socket, POLLERR); }
    /** Whether {@code socket} reported an error at the last poll. */
    public boolean pollerr(ZMQ.Socket socket) { return has(socket, POLLERR); }

    /** Drops every registration; the sockets stay open. */
    @Override
    public void close() {
        registrations.clear();
        ready.clear();
        if (poller != null) poller.close();
        poller = null;
        polled = new ArrayList<>();
    }

    /** Same as {@link #close()}. */
    public void destroy() {
        close();
    }
}
