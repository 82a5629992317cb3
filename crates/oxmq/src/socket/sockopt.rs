//! A socket's options: setsockopt and getsockopt with libzmq's numbers, and the typed
//! helpers over them (set_int, subscribe, monitor, ...).

use super::*;

impl Socket {
    /// Sets an option (libzmq semantics; see [`crate::opt`]).
    pub fn setsockopt(&mut self, option: i32, value: &[u8]) -> Result<()> {
        // LINGER may be set after shutdown, so a program can close quickly (libzmq allows it).
        if option != opt::LINGER {
            self.check_term()?;
        }
        self.process_commands();
        if option == opt::OXMQ_FD_LEVEL {
            return self.set_level(value);
        }
        if option == opt::OXMQ_RECV_SPIN {
            return self.spin.set(value);
        }
        match option {
            opt::OXMQ_DNS_FOLLOW => {
                self.follow.enabled = match options::int_val(value)? {
                    0 => false,
                    1 => true,
                    _ => return Err(Error::Invalid),
                };
                return Ok(());
            }
            opt::OXMQ_DNS_IVL => {
                let v = options::int_val(value)?;
                if !(100..=86_400_000).contains(&v) {
                    return Err(Error::Invalid);
                }
                self.follow.ivl_ms = v;
                return Ok(());
            }
            opt::OXMQ_NAME => {
                let v = value.strip_suffix(&[0]).unwrap_or(value);
                if !metrics::valid_name(v) {
                    return Err(Error::Invalid);
                }
                self.shared.metrics.set_name(std::str::from_utf8(v).map_err(|_| Error::Invalid)?);
                return Ok(());
            }
            _ => {}
        }
        if let Some(r) = self.pattern.setsockopt(&mut self.pipes, option, value) {
            self.reap();
            return r;
        }
        let old_sndhwm = self.options.sndhwm;
        match self.options.set(option, value)? {
            true => {
                if option == opt::LINGER {
                    self.shared.linger.store(self.options.linger, Ordering::Release);
                }
                if option == opt::SNDHWM {
                    self.resize_send_queues(old_sndhwm);
                }
                Ok(())
            }
            false => Err(Error::Invalid),
        }
    }

    /// SNDHWM applies to the pipes that exist too, as in libzmq: each outbound queue's limit
    /// is this socket's SNDHWM plus what the peer adds to it (an inproc peer's RCVHWM), which
    /// is the old limit less the old SNDHWM. 0 on either part leaves the queue unlimited.
    pub(super) fn resize_send_queues(&mut self, old_sndhwm: i32) {
        let new = hwm(self.options.sndhwm);
        let mut raised = Vec::new();
        for (i, slot) in self.pipes.slots.iter_mut().enumerate() {
            let Some(slot) = slot else { continue };
            let cur = slot.end.hwm();
            // Unlimited when the peer's part is (cur 0 beside a limited SNDHWM) or the new one is.
            let limit = if (cur == 0 && old_sndhwm != 0) || new == 0 { 0 } else { new + cur.saturating_sub(hwm(old_sndhwm)) };
            slot.end.set_hwm(limit);
            if cur != 0 && (limit == 0 || limit > cur) {
                raised.push(i);
            }
        }
        // A queue that was full may take messages again: the pattern sends to it once more.
        for i in raised {
            self.pattern.write_activated(&mut self.pipes, i);
        }
    }

    /// Reads an option into `value`; returns the number of bytes written.
    pub fn getsockopt(&mut self, option: i32, value: &mut [u8]) -> Result<usize> {
        let v = self.get_bytes(option)?;
        if value.len() < v.len() {
            return Err(Error::Invalid);
        }
        value[..v.len()].copy_from_slice(&v);
        Ok(v.len())
    }

    /// Reads an option in its wire form (ints as 4 native-endian bytes; LAST_ENDPOINT
    /// NUL-terminated as libzmq returns it).
    pub fn get_bytes(&mut self, option: i32) -> Result<Vec<u8>> {
        if option != opt::LINGER {
            self.check_term()?;
        }
        let i = |n: i32| Ok(n.to_ne_bytes().to_vec());
        match option {
            opt::TYPE => return i(self.shared.kind.as_raw()),
            opt::RCVMORE => return i(self.rcvmore as i32),
            opt::FD => return i(self.fd()),
            opt::EVENTS => return i(self.events()? as i32),
            opt::OXMQ_FD_LEVEL => return i(self.level.mask as i32),
            opt::OXMQ_RECV_SPIN => return i(self.spin.micros()),
            opt::OXMQ_DNS_FOLLOW => return i(self.follow.enabled as i32),
            opt::OXMQ_DNS_IVL => return i(self.follow.ivl_ms),
            opt::OXMQ_NAME => {
                // NUL-terminated, as libzmq's string options.
                let mut v = self.shared.metrics.name().into_bytes();
                v.push(0);
                return Ok(v);
            }
            opt::LAST_ENDPOINT => {
                let mut v = self.last_endpoint.clone().into_bytes();
                v.push(0);
                return Ok(v);
            }
            _ => {}
        }
        if let Some(v) = self.pattern.getsockopt(option) {
            return Ok(v);
        }
        self.options.get(option).ok_or(Error::Invalid)
    }

    /// Sets an integer option.
    pub fn set_int(&mut self, option: i32, v: i32) -> Result<()> {
        self.setsockopt(option, &v.to_ne_bytes())
    }

    /// Reads an integer option.
    pub fn get_int(&mut self, option: i32) -> Result<i32> {
        let v = self.get_bytes(option)?;
        let a: [u8; 4] = v.as_slice().try_into().map_err(|_| Error::Invalid)?;
        Ok(i32::from_ne_bytes(a))
    }

    /// Sets a bytes option (ROUTING_ID, SUBSCRIBE, ...).
    pub fn set_bytes(&mut self, option: i32, v: &[u8]) -> Result<()> {
        self.setsockopt(option, v)
    }

    /// The endpoint of the last bind or connect, with wildcards resolved
    /// (`tcp://127.0.0.1:41234`).
    pub fn last_endpoint(&mut self) -> Result<String> {
        Ok(self.last_endpoint.clone())
    }

    /// Starts monitoring (as `zmq_socket_monitor`): version-1 events in `events` (a mask of
    /// [`crate::monitor::event`]s, at most [`crate::io::monitor::event::ALL`]) are sent by a PAIR
    /// socket bound at the inproc `endpoint`; connect a PAIR there to read them. `None` or
    /// `""` stops monitoring (MONITOR_STOPPED is sent if asked for). Starting again replaces
    /// the previous monitor. Errors: `ProtoNoSupport` for a transport other than inproc,
    /// `Invalid` for a bad endpoint or mask, `AddrInUse` if the endpoint is taken.
    pub fn monitor(&mut self, endpoint: Option<&str>, events: u64) -> Result<()> {
        self.monitor_versioned(endpoint, events, 1, SocketType::Pair)
    }

    /// Asks for the queue depths of every pipe: one PIPES_STATS event each, with the messages
    /// queued towards the peer and from it, and the connection's local and remote address
    /// (`zmq_socket_monitor_pipes_stats`). `Invalid` unless a monitor of version 2 or 3 wants
    /// PIPES_STATS; `Again` when there are no pipes.
    pub fn monitor_pipes_stats(&mut self) -> Result<()> {
        self.check_term()?;
        self.process_commands();
        let m = &self.shared.monitor;
        if !m.wants(crate::io::monitor::event::PIPES_STATS) {
            return Err(Error::Invalid);
        }
        let mut any = false;
        for sl in self.pipes.slots.iter().flatten() {
            let (local, remote) = sl.end.addrs().unwrap_or_else(|| (sl.endpoint.clone().unwrap_or_default(), String::new()));
            let at = crate::io::monitor::Addrs { local, remote, bind_side: sl.listener.is_some(), routing_id: &[] };
            any = true;
            if !m.emit_values(crate::io::monitor::event::PIPES_STATS, &[sl.end.queued_out(), sl.end.queued_in()], &at) {
                return Err(Error::Invalid);
            }
        }
        self.level_hook();
        if any {
            Ok(())
        } else {
            Err(Error::Again)
        }
    }

    /// [`Socket::monitor`] with the message format `version` (1, 2 as libzmq's draft, or 3:
    /// version 2 plus the peer's routing id; see [`crate::monitor`]) and the monitor socket's
    /// type (PAIR, PUB or PUSH), as `zmq_socket_monitor_versioned`.
    pub fn monitor_versioned(&mut self, endpoint: Option<&str>, events: u64, version: u8, kind: SocketType) -> Result<()> {
        self.check_term()?;
        monitor::start(&self.shared.monitor, &self.env, endpoint, events, version, kind)
    }

    /// Subscribes a SUB socket to a prefix (`""` for everything).
    pub fn subscribe(&mut self, prefix: impl AsRef<[u8]>) -> Result<()> {
        self.setsockopt(opt::SUBSCRIBE, prefix.as_ref())
    }

    /// Removes one subscription to a prefix.
    pub fn unsubscribe(&mut self, prefix: impl AsRef<[u8]>) -> Result<()> {
        self.setsockopt(opt::UNSUBSCRIBE, prefix.as_ref())
    }
}
