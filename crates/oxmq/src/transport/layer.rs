//! The layers a `ws://`, `wss://` or `tls://` endpoint puts over its tcp connections: made once
//! per bind or connect (so a bad certificate or key is EINVAL there), applied to each
//! connection by the listener or the [`Dialer`](super::connect::Dialer).

use super::connect::{Role, Wrap};
use super::endpoint::{Layered, Scheme};
use super::stream::Stream;
use super::tls::{self, TlsLayer, TlsOptions};
use super::ws::{WsConfig, WsLayer};
use crate::error::Result;
use std::sync::Arc;

/// The wrap for `layered`'s connections, for a socket with `mechanism` and the WSS options
/// `t`, of type `socket_type` (its ZMTP name) and MAXMSGSIZE `max_message`; `bind`: a
/// listener's (server's) wrap.
pub(crate) fn wrap(
    layered: &Layered,
    mechanism: &zmtp::Mechanism,
    socket_type: &'static [u8],
    max_message: Option<u64>,
    t: &TlsOptions,
    bind: bool,
) -> Result<Wrap> {
    let scheme = layered.scheme;
    let ws = scheme.ws().then(|| Arc::new(WsConfig::new(&layered.path, &layered.authority, mechanism, socket_type, max_message)));
    enum Tls {
        None,
        Server(Arc<rustls::ServerConfig>),
        Client(Arc<rustls::ClientConfig>, rustls::pki_types::ServerName<'static>),
    }
    let tls = match (scheme.tls(), bind) {
        (false, _) => Tls::None,
        (true, true) => Tls::Server(tls::server_config(t)?),
        (true, false) => {
            let (cfg, name) = tls::client_config(t, &layered.host)?;
            Tls::Client(cfg, name)
        }
    };
    Ok(Arc::new(move |s: Stream, role: Role| {
        let s = match &tls {
            Tls::None => s,
            Tls::Server(cfg) => Stream::Layer(Box::new(TlsLayer::server(s, cfg.clone())?)),
            Tls::Client(cfg, name) => Stream::Layer(Box::new(TlsLayer::client(s, cfg.clone(), name.clone())?)),
        };
        Ok(match &ws {
            Some(cfg) => {
                let name = if scheme == Scheme::Wss { "wss" } else { "ws" };
                Stream::Layer(Box::new(WsLayer::new(s, role == Role::Client, cfg.clone(), name)))
            }
            None => s,
        })
    }))
}
