package io.oxmq;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The built-in proxy ({@code zmq_proxy}): moves messages between a frontend and a backend
 * socket in the calling thread, optionally copying each to a capture socket.
 */
public final class Proxy {
    private Proxy() {}

    /**
     * Runs until the sockets' context is closed, which ends it with {@link TermException} (the
     * sockets are closed then). {@code capture} may be {@code null}. The sockets are held by
     * this thread while it runs.
     */
    public static void run(Socket frontend, Socket backend, Socket capture) {
        runSteerable(frontend, backend, capture, null);
    }

    /**
     * Like {@link #run}, with a control socket: the message {@code TERMINATE} on it ends the
     * proxy normally, {@code PAUSE}/{@code RESUME} stop and restart forwarding.
     */
    public static void runSteerable(Socket frontend, Socket backend, Socket capture, Socket control) {
        Socket[] all = {frontend, backend, capture, control};
        int entered = 0;
        try {
            for (; entered < all.length; entered++) {
                if (all[entered] != null) all[entered].enterForeign();
            }
            int rc = (int) Native.zmq_proxy_steerable.invokeExact(frontend.handle, backend.handle,
                    capture == null ? 0L : capture.handle, control == null ? 0L : control.handle);
            if (rc != 0) {
                int e = Native.lastErrno();
                throw ZmqException.of("zmq_proxy", e);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            for (int i = 0; i < entered; i++) {
                if (all[i] != null) all[i].exitForeign();
            }
        }
    }
}
