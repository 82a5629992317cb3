//! [`AsyncSocket`] as a [`Stream`] of received messages and a [`Sink`] of messages to send.

use super::{AsyncSocket, Message};
use crate::error::{Error, Result};
use futures_core::Stream;
use futures_sink::Sink;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Received messages, each whole. The stream ends when the socket's context is shut down
/// ([`Error::Term`] is not yielded); other errors are items. Cancel safe, as
/// [`AsyncSocket::recv`].
impl Stream for AsyncSocket {
    type Item = Result<Message>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Message>>> {
        match self.get_mut().poll_recv(cx) {
            Poll::Ready(Err(Error::Term)) => Poll::Ready(None),
            Poll::Ready(r) => Poll::Ready(Some(r)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Messages to send, each whole. The sink holds at most one message that the socket could not
/// take yet (`start_send` stores it; `poll_ready`, `poll_flush` and `poll_close` send it,
/// waiting for room as [`AsyncSocket::send`] does). Closing the sink flushes it and leaves the
/// socket open.
impl Sink<Message> for AsyncSocket {
    type Error = Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        self.get_mut().poll_out(cx)
    }

    fn start_send(self: Pin<&mut Self>, item: Message) -> Result<()> {
        let this = self.get_mut();
        debug_assert!(this.out.is_none(), "start_send without poll_ready");
        this.out = Some(item);
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        self.get_mut().poll_out(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        self.get_mut().poll_out(cx)
    }
}

impl AsyncSocket {
    /// Sends the sink's buffered message, if any.
    fn poll_out(&mut self, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let Some(mut m) = self.out.take() else {
            return Poll::Ready(Ok(()));
        };
        match self.poll_send(cx, &mut m) {
            Poll::Pending => {
                self.out = Some(m);
                Poll::Pending
            }
            r => r,
        }
    }
}
