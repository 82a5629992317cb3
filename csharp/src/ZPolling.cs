// Polling several sockets at once (zmq_poll) without allocating per wait.

using System;
using System.Collections.Generic;
using System.Diagnostics;

namespace ZeroMQ
{
    /// <summary>One socket to poll and the events wanted; after a poll, the events that are ready.</summary>
    public sealed class ZPollItem
    {
        /// <summary>The socket.</summary>
        public ZSocket Socket { get; private set; }
        /// <summary>The events asked for.</summary>
        public ZPollEvents Events { get; private set; }
        /// <summary>The events ready after the last <see cref="ZPolling.Poll"/>.</summary>
        public ZPollEvents ReadyEvents { get; internal set; }

        /// <summary>Polls <paramref name="socket"/> for <paramref name="events"/>.</summary>
        public ZPollItem(ZSocket socket, ZPollEvents events)
        {
            if (socket == null) throw new ArgumentNullException("socket");
            if ((events & (ZPollEvents.In | ZPollEvents.Out)) == 0)
                throw new ArgumentException("ask for In, Out or both", "events");
            Socket = socket;
            Events = events;
        }

        /// <summary>Polls for incoming messages.</summary>
        public static ZPollItem CreateReceiver(ZSocket socket) { return new ZPollItem(socket, ZPollEvents.In); }
        /// <summary>Polls for room to send.</summary>
        public static ZPollItem CreateSender(ZSocket socket) { return new ZPollItem(socket, ZPollEvents.Out); }
        /// <summary>Polls for both.</summary>
        public static ZPollItem CreateReceiverSender(ZSocket socket) { return new ZPollItem(socket, ZPollEvents.In | ZPollEvents.Out); }

        /// <summary>Whether a message can be received now.</summary>
        public bool CanReceive { get { return (ReadyEvents & ZPollEvents.In) != 0; } }
        /// <summary>Whether a message can be sent now.</summary>
        public bool CanSend { get { return (ReadyEvents & ZPollEvents.Out) != 0; } }
    }

    /// <summary>Waits on several sockets (<c>zmq_poll</c>).</summary>
    public static class ZPolling
    {
        const int MaxItems = 1024;

        /// <summary>
        /// Waits up to <paramref name="timeout"/> (<see cref="System.Threading.Timeout.InfiniteTimeSpan"/>:
        /// forever) until one of the items is ready; sets each item's
        /// <see cref="ZPollItem.ReadyEvents"/> and returns how many are ready (0 on timeout).
        /// </summary>
        /// <exception cref="ZTerminatedException">A socket's context was shut down.</exception>
        public static unsafe int Poll(IList<ZPollItem> items, TimeSpan timeout)
        {
            if (items == null) throw new ArgumentNullException("items");
            int n = items.Count;
            if (n == 0 || n > MaxItems) throw new ArgumentOutOfRangeException("items", "1 to " + MaxItems + " items");
            long ms = TimeoutMs(timeout);
            Native.PollItem* native = stackalloc Native.PollItem[n];
            var leases = new HandleLease[n];
            int leased = 0;
            try
            {
                for (int i = 0; i < n; i++)
                {
                    ZPollItem it = items[i];
                    if (it == null) throw new ArgumentNullException("items[" + i + "]");
                    leases[i] = it.Socket.Lease();
                    leased++;
                    native[i].Socket = leases[i].Ptr;
                    native[i].Fd = 0;
                    native[i].Events = (short)it.Events;
                    native[i].Revents = 0;
                }
                int rc = PollNative(native, n, ms);
                for (int i = 0; i < n; i++) items[i].ReadyEvents = (ZPollEvents)native[i].Revents;
                return rc;
            }
            finally
            {
                for (int i = 0; i < leased; i++) leases[i].Dispose();
            }
        }

        internal static unsafe bool PollOne(ZSocket socket, ZPollEvents events, TimeSpan timeout)
        {
            long ms = TimeoutMs(timeout);
            Native.PollItem item;
            using (var s = socket.Lease())
            {
                item.Socket = s.Ptr;
                item.Fd = 0;
                item.Events = (short)events;
                item.Revents = 0;
                return PollNative(&item, 1, ms) > 0;
            }
        }

        static unsafe int PollNative(Native.PollItem* items, int n, long ms)
        {
            long start = ms > 0 ? Stopwatch.GetTimestamp() : 0;
            long wait = ms;
            while (true)
            {
                int rc = Native.zmq_poll(items, n, wait);
                if (rc >= 0) return rc;
                ZError e = ZError.GetLastErr();
                if (e != ZError.EINTR) throw ZException.For(e, "zmq_poll");
                if (ms > 0)
                {
                    wait = ms - (Stopwatch.GetTimestamp() - start) * 1000 / Stopwatch.Frequency;
                    if (wait <= 0) return 0;
                }
            }
        }

        static long TimeoutMs(TimeSpan timeout)
        {
            if (timeout == System.Threading.Timeout.InfiniteTimeSpan) return -1;
            if (timeout < TimeSpan.Zero) throw new ArgumentOutOfRangeException("timeout");
            return (long)Math.Ceiling(timeout.TotalMilliseconds);
        }
    }
}
