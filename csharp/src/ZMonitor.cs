// ZMonitor: the receiving end of a socket monitor (zmq_socket_monitor), decoding libzmq's
// two-frame events.

using System;
using System.Threading;

namespace ZeroMQ
{
    /// <summary>One monitor event: what happened, its value (an fd, errno or interval), and the endpoint.</summary>
    public sealed class ZMonitorEventArgs : EventArgs
    {
        /// <summary>The event.</summary>
        public ZMonitorEvents Event { get; private set; }
        /// <summary>The event's value: a file descriptor, an errno, a reconnect interval, a protocol error code.</summary>
        public int Value { get; private set; }
        /// <summary>The endpoint the event concerns.</summary>
        public string Address { get; private set; }

        internal ZMonitorEventArgs(ZMonitorEvents e, int value, string address)
        {
            Event = e;
            Value = value;
            Address = address;
        }

        /// <summary>"Event(value) address".</summary>
        public override string ToString() { return Event + "(" + Value + ") " + Address; }
    }

    /// <summary>
    /// Watches a socket's connection events: <see cref="Create"/> starts the monitor on the socket
    /// and connects a PAIR socket to it; <see cref="ReceiveEvent"/> reads the events.
    /// Dispose it before the monitored socket's context.
    /// </summary>
    public sealed class ZMonitor : IDisposable
    {
        static int counter;
        readonly ZSocket monitored;
        readonly ZSocket pair;
        readonly byte[] header = new byte[6];

        /// <summary>The inproc endpoint the events are published on.</summary>
        public string Endpoint { get; private set; }

        ZMonitor(ZSocket monitored, ZSocket pair, string endpoint)
        {
            this.monitored = monitored;
            this.pair = pair;
            Endpoint = endpoint;
        }

        /// <summary>Starts monitoring <paramref name="socket"/> for <paramref name="events"/>.</summary>
        public static ZMonitor Create(ZSocket socket, ZMonitorEvents events = ZMonitorEvents.AllEvents)
        {
            if (socket == null) throw new ArgumentNullException("socket");
            string ep = "inproc://oxmq.csharp.monitor." + Interlocked.Increment(ref counter) + "." + Guid.NewGuid().ToString("N");
            socket.Monitor(ep, events);
            var pair = new ZSocket(socket.Context, ZSocketType.PAIR);
            try
            {
                pair.Connect(ep);
            }
            catch
            {
                pair.Dispose();
                throw;
            }
            return new ZMonitor(socket, pair, ep);
        }

        /// <summary>
        /// Waits up to <paramref name="timeout"/> for the next event; false when none came.
        /// </summary>
        /// <exception cref="ZTerminatedException">The context was shut down.</exception>
        public bool ReceiveEvent(TimeSpan timeout, out ZMonitorEventArgs ev)
        {
            ev = null;
            if (!pair.PollIn(timeout)) return false;
            int n = pair.ReceiveBytes(header, 0, header.Length);
            if (n != 6 || !pair.ReceiveMore)
                throw new InvalidOperationException("malformed monitor event (first frame of " + n + " bytes)");
            int id = header[0] | header[1] << 8;
            int value = header[2] | header[3] << 8 | header[4] << 16 | header[5] << 24;
            string address = pair.ReceiveString();
            // Further frames (newer event formats) are skipped.
            var skip = new byte[0];
            while (pair.ReceiveMore) pair.ReceiveBytes(skip, 0, 0);
            ev = new ZMonitorEventArgs((ZMonitorEvents)id, value, address);
            return true;
        }

        /// <summary>
        /// Waits until an event in <paramref name="wanted"/> arrives, skipping others; null when
        /// <paramref name="timeout"/> passes first.
        /// </summary>
        public ZMonitorEventArgs WaitFor(ZMonitorEvents wanted, TimeSpan timeout)
        {
            long deadline = DateTime.UtcNow.Ticks + timeout.Ticks;
            while (true)
            {
                long left = deadline - DateTime.UtcNow.Ticks;
                if (left <= 0) return null;
                ZMonitorEventArgs ev;
                if (!ReceiveEvent(TimeSpan.FromTicks(left), out ev)) return null;
                if ((ev.Event & wanted) != 0) return ev;
            }
        }

        /// <summary>Stops the monitor and closes the receiving socket. Idempotent.</summary>
        public void Dispose()
        {
            if (pair.IsDisposed) return;
            if (!monitored.IsDisposed)
            {
                try { monitored.Monitor(null, 0); }
                catch (ZException) { } // the context is shutting down: nothing left to stop
            }
            pair.Dispose();
        }
    }
}
