//! A socket's endpoints: bind, connect (a session on an I/O thread, or an inproc pipe), unbind
//! and disconnect.

use super::*;

impl Socket {
    /// The socket type's ZMTP name (a plain ZWS2.0 peer is told nothing else of it).
    fn wire_name(&self) -> &'static [u8] {
        self.socket_type().wire().map_or(&b"PAIR"[..], |t| t.name().as_bytes())
    }

    /// The layer of a ws, wss or tls endpoint, made at bind/connect so bad TLS options are EINVAL
    /// there; `serve` for a bind.
    fn layer_for(&self, l: &crate::transport::endpoint::Layered, serve: bool) -> Result<crate::transport::connect::Wrap> {
        let o = &self.options;
        crate::transport::layer::wrap(l, &o.security.mechanism(), self.wire_name(), o.max_msg_size(), &o.tls, serve)
    }

    /// Accepts connections at `endpoint`.
    pub fn bind(&mut self, endpoint: &str) -> Result<()> {
        self.check_term()?;
        self.process_commands();
        if let Some(addr) = endpoint.strip_prefix("udp://") {
            return self.bind_udp(endpoint, addr);
        }
        let (ep, layered) = Endpoint::parse_layered(endpoint, true)?;
        self.check_stream_transport()?;
        let wrap = layered.as_ref().map(|l| self.layer_for(l, true)).transpose()?;
        self.shared.metrics.note_endpoint(endpoint);
        match ep {
            Endpoint::Inproc(name) => {
                inproc::bind(&self.env, &self.shared.io, self.shared.kind, &self.options, &name)?;
                self.endpoints.push(EndpointRec::InprocBind { name });
                self.last_endpoint = endpoint.to_string();
                // Take the pipes of sockets that connected before this bind now, as libzmq
                // does: a SUB's subscriptions (or a probe) go out at bind, not when this
                // socket is next used.
                self.process_commands();
            }
            ep => {
                let lo = policy::listen_options(&self.options);
                let (listener, resolved) = listen::listen(&ep, &lo)
                    .inspect_err(|e| crate::io::monitor::bind_failed(&self.shared.monitor, endpoint, e))?;
                let resolved = match &layered {
                    Some(l) => l.bound(&resolved),
                    None => resolved,
                };
                let fd = listener.fd();
                self.shared
                    .monitor
                    .emit(crate::io::monitor::event::LISTENING, fd as u64, || crate::io::monitor::Addrs::bound(&resolved));
                let io = self.env.io_thread()?;
                let id = self.next_id();
                io.send(IoCmd::Listen(Listening {
                    id,
                    listener,
                    socket: self.shared.io.clone(),
                    cfg: Box::new(policy::session_config(self.shared.kind, &self.options)),
                    filters: lo.filters,
                    wrap,
                }));
                self.endpoints.push(EndpointRec::Listener {
                    given: endpoint.to_string(),
                    resolved: resolved.clone(),
                    io,
                    id,
                    fd,
                });
                self.last_endpoint = resolved;
            }
        }
        Ok(())
    }

    /// DGRAM has no meaning over tcp, ipc or inproc: `NoCompatProto` (libzmq lets it bind
    /// there and carry raw bytes without addresses).
    pub(super) fn check_stream_transport(&self) -> Result<()> {
        if self.shared.kind == SocketType::Dgram {
            return Err(Error::NoCompatProto);
        }
        Ok(())
    }

    pub(super) fn next_id(&mut self) -> u64 {
        let id = (self.shared.id << 20) | self.next_endpoint_id;
        self.next_endpoint_id += 1;
        id
    }

    /// Connects to `endpoint`. The peer need not exist yet: the connection is retried every
    /// RECONNECT_IVL, and messages queue meanwhile (unless IMMEDIATE is set).
    pub fn connect(&mut self, endpoint: &str) -> Result<()> {
        self.check_term()?;
        self.process_commands();
        if let Some(addr) = endpoint.strip_prefix("udp://") {
            return self.connect_udp(endpoint, addr);
        }
        let (ep, layered) = Endpoint::parse_layered(endpoint, false)?;
        self.check_stream_transport()?;
        // A layered endpoint (ws, wss, tls): its layer, made now so bad TLS options are EINVAL.
        let wrap = layered.as_ref().map(|l| self.layer_for(l, false)).transpose()?;
        match ep {
            Endpoint::Inproc(name) => {
                let end = inproc::connect(&self.env, self.shared.kind, &self.options, &name)?;
                self.attach(end, Some(endpoint.to_string()), true);
                self.endpoints.push(EndpointRec::InprocConnect { given: endpoint.to_string() });
            }
            ep @ Endpoint::Tcp { host: crate::transport::endpoint::Host::Name(_), .. }
                if self.follow.enabled && self.options.socks_proxy.is_empty() && wrap.is_none() =>
            {
                self.connect_followed(endpoint, ep)?;
            }
            ep => {
                let options = Box::new(self.options.clone());
                let (io, id) = self.connect_session(ep, endpoint, options, wrap)?;
                self.endpoints.push(EndpointRec::Connect { given: endpoint.to_string(), io, id });
            }
        }
        self.shared.metrics.note_endpoint(endpoint);
        // CONNECT_ROUTING_ID names one connection only (libzmq clears it the same way).
        self.options.link.connect_routing_id = None;
        self.last_endpoint = endpoint.to_string();
        Ok(())
    }

    /// Starts a connecting session to `ep` (tcp or ipc), named `given` in its events and its
    /// pipes, with `options`; returns its I/O thread and endpoint id (for `CloseEndpoint`).
    pub(super) fn connect_session(
        &mut self,
        ep: Endpoint,
        given: &str,
        options: Box<Options>,
        wrap: Option<crate::transport::connect::Wrap>,
    ) -> Result<(Arc<IoThread>, u64)> {
        let io = self.env.io_thread()?;
        let id = self.next_id();
        // The pipe exists from the start so messages sent before the peer is up are
        // queued — libzmq's behaviour unless IMMEDIATE. Types that route by peer id get
        // a pipe per connection instead, created when the handshake completes, unless
        // CONNECT_ROUTING_ID names the peer now: then the pipe is made here under that
        // name, so the application can route to it at once (as libzmq allows).
        let kind = self.shared.kind;
        let named = options.link.connect_routing_id.clone();
        let by_id = kind.routes_by_id();
        let pipe = if options.immediate || (by_id && named.is_none()) {
            None
        } else {
            let (mut mine, mut theirs) = crate::pipe::pipe([hwm(options.sndhwm), hwm(options.rcvhwm)]);
            let conflate = policy::conflate(kind, &options);
            if conflate != (false, false) {
                PipeEnd::conflate(conflate, &mut mine, &mut theirs);
            }
            if let (true, Some(id)) = (by_id, named) {
                let mut id = Msg::from(id);
                id.set_flags(crate::msg::ROUTING_ID);
                theirs.write(id);
                theirs.flush();
            }
            self.attach(mine, Some(given.to_string()), true);
            Some(theirs)
        };
        let mut dialer = Dialer::new(ep, given.to_string(), policy::stream_options(&options));
        if let Some(w) = wrap {
            dialer = dialer.with_layer(w);
        }
        let cfg = Box::new(policy::session_config(kind, &options));
        io.send(IoCmd::Connect { id, dialer: Box::new(dialer), socket: self.shared.io.clone(), cfg, pipe });
        Ok((io, id))
    }

    /// Stops accepting at an endpoint given to `bind` (or reported by LAST_ENDPOINT).
    pub fn unbind(&mut self, endpoint: &str) -> Result<()> {
        self.check_term()?;
        // A wildcard (port `*`, `ipc://*`) names no one endpoint: libzmq finds only what it
        // resolved to (ZMQ_LAST_ENDPOINT), so unbinding by the wildcard is ENOENT.
        let wildcard = endpoint.ends_with(":*") || endpoint == "ipc://*";
        let find = |endpoint: &str| {
            self.endpoints.iter().position(|e| match e {
                EndpointRec::Listener { given, resolved, .. } => (given == endpoint && !wildcard) || resolved == endpoint,
                EndpointRec::InprocBind { name } => endpoint.strip_prefix("inproc://") == Some(name.as_str()),
                EndpointRec::Datagram { given, resolved } => (given == endpoint && !wildcard) || resolved == endpoint,
                _ => false,
            })
        };
        let Some(pos) = find(endpoint).or_else(|| self.find_resolved(endpoint, find)) else {
            return Err(Self::not_found(endpoint, true));
        };
        match self.endpoints.remove(pos) {
            EndpointRec::Listener { io, id, fd, resolved, .. } => {
                crate::io::monitor::listener_closed(&self.shared.monitor, fd, &resolved);
                io.send(IoCmd::CloseEndpoint { id });
                self.note_disconnect();
                // The connections it accepted go now, with their inbound queues (zmq_unbind):
                // nothing more is read from them, even on this thread's direct receive path.
                let slots: Vec<usize> = (0..self.pipes.slots.len())
                    .filter(|&i| matches!(&self.pipes.slots[i], Some(s) if s.listener == Some(id)))
                    .collect();
                for i in slots {
                    self.pattern.detach(&mut self.pipes, i);
                    self.pipes.remove(i);
                }
            }
            EndpointRec::InprocBind { name } => inproc::unbind(&self.env, self.shared.id, &name),
            EndpointRec::Datagram { given, .. } => self.detach_endpoint(&given),
            _ => {}
        }
        Ok(())
    }

    /// Drops the connection made by `connect(endpoint)`, discarding what is queued for it.
    pub fn disconnect(&mut self, endpoint: &str) -> Result<()> {
        self.check_term()?;
        let find = |endpoint: &str| {
            self.endpoints.iter().position(|e| match e {
                EndpointRec::Connect { given, .. } | EndpointRec::InprocConnect { given } => given == endpoint,
                EndpointRec::Follow { given, .. } => given == endpoint,
                EndpointRec::Datagram { given, .. } => given == endpoint,
                _ => false,
            })
        };
        let Some(pos) = find(endpoint).or_else(|| self.find_resolved(endpoint, find)) else {
            return Err(Self::not_found(endpoint, false));
        };
        match self.endpoints.remove(pos) {
            EndpointRec::Connect { io, id, given } => {
                io.send(IoCmd::CloseEndpoint { id });
                self.detach_endpoint(&given);
                self.note_disconnect();
            }
            EndpointRec::InprocConnect { given } | EndpointRec::Datagram { given, .. } => self.detach_endpoint(&given),
            EndpointRec::Follow { group, .. } => {
                self.disconnect_followed(group);
                self.note_disconnect();
            }
            _ => {}
        }
        Ok(())
    }

    /// A tcp endpoint not found as written, looked for again as the address it names (libzmq's
    /// `resolve_tcp_addr`; blocks on the name service for a host name, as libzmq does).
    pub(super) fn find_resolved(&self, endpoint: &str, find: impl Fn(&str) -> Option<usize>) -> Option<usize> {
        if !endpoint.starts_with("tcp://") {
            return None;
        }
        resolve::canonical(endpoint, self.options.ipv6).and_then(|c| find(&c))
    }

    /// The error for an endpoint `unbind` or `disconnect` did not find: ENOENT, unless it is
    /// not an endpoint at all (no `://`, an unknown transport, a bad ipc or inproc name). A tcp
    /// endpoint that names no address is ENOENT too, as in libzmq, which looks it up unresolved.
    pub(super) fn not_found(endpoint: &str, bind: bool) -> Error {
        if endpoint.starts_with("udp://") || endpoint.starts_with("tcp://") {
            return Error::NoEnt;
        }
        match Endpoint::parse(endpoint, bind) {
            Err(e) => e,
            Ok(_) => Error::NoEnt,
        }
    }

    /// RECONNECT_STOP_AFTER_DISCONNECT: a tcp or ipc endpoint was let go, so this socket's
    /// connecting sessions stop at their next refused connect (libzmq 4.3.5 sets the same flag
    /// in `term_endpoint`, which inproc endpoints return before).
    pub(super) fn note_disconnect(&self) {
        if self.options.link.reconnect_stop.after_disconnect() {
            self.shared.disconnected.store(true, Ordering::Relaxed);
        }
    }

    pub(super) fn detach_endpoint(&mut self, endpoint: &str) {
        let slots: Vec<usize> = (0..self.pipes.slots.len())
            .filter(|&i| matches!(&self.pipes.slots[i], Some(s) if s.endpoint.as_deref() == Some(endpoint)))
            .collect();
        for i in slots {
            self.pattern.detach(&mut self.pipes, i);
            self.pipes.remove(i);
        }
    }

    // ----- commands -----
}
