//! `Msg`: one message frame, as it travels through pipes and sockets.
//!
//! Small bodies (up to [`INLINE_CAP`] bytes) live inside the struct, so the hot path for small
//! messages never touches the allocator. Larger bodies are a reference-counted [`Bytes`], so
//! fan-out (PUB to many peers) clones a pointer rather than the data, and a body decoded off the
//! wire can point straight into the receive buffer it arrived in. Bodies up to 4 KiB built by
//! the application or decoded off the wire are [`Piece`]s of a shared chunk (`chunk.rs`).
//!
//! The struct is at most 56 bytes and 8-aligned, so the C ABI can store it inside the 64-byte
//! `zmq_msg_t` with room left for its own tag.

use crate::arena;
use crate::chunk::Piece;
use crate::properties::Properties;
use bytes::Bytes;
use std::fmt;
use std::mem::MaybeUninit;
use std::ops::Deref;
use std::sync::Arc;

/// Bodies up to this many bytes are stored inline (libzmq stores up to 33).
pub const INLINE_CAP: usize = 38;

/// Flag: more frames of the same message follow.
pub(crate) const MORE: u8 = 0x01;
/// Internal flag: this frame carries the peer's routing id. An engine writes it as the first
/// item of its inbound pipe for socket types that route by peer (ROUTER); it never reaches the
/// application as a message.
pub(crate) const ROUTING_ID: u8 = 0x40;
/// Internal flag: the body is a ZMTP command body (name length, name, data) that the engine
/// sends as a command frame; DISH's JOIN/LEAVE travel this way, and RADIO receives them so.
pub(crate) const COMMAND: u8 = 0x02;

enum Body {
    Inline {
        len: u8,
        buf: [u8; INLINE_CAP],
    },
    Shared(Bytes),
    /// Bytes of a counted chunk (`chunk.rs`): bodies the application builds (cut from its
    /// thread's chunk, or a chunk of their own when large) and mid-size bodies decoded off
    /// the wire (cut from the connection's chunk). `unique`: no other frame refers to these
    /// bytes, so they may be written in place (`with_size`, `zmq_msg_init_size`,
    /// `zmq_msg_data` on a received frame). Fan-out freezes a body (`Msg::freeze`: the flag
    /// goes) before cloning it, so the clones share it; a clone of a unique body is a copy.
    Piece {
        piece: Piece,
        unique: bool,
    },
}

impl Clone for Body {
    /// An inline body is copied in place; the others, out of line.
    #[inline]
    fn clone(&self) -> Body {
        match self {
            Body::Inline { len, buf } => Body::Inline { len: *len, buf: *buf },
            other => other.clone_outside(),
        }
    }
}

impl Body {
    #[inline(never)]
    fn clone_outside(&self) -> Body {
        match self {
            Body::Inline { len, buf } => Body::Inline { len: *len, buf: *buf },
            Body::Shared(b) => Body::Shared(b.clone()),
            // Two frames may not write the same memory: a clone of a unique body is a copy.
            Body::Piece { piece, unique: true } => Body::Piece { piece: arena::copy(piece.as_slice()), unique: false },
            Body::Piece { piece, unique: false } => Body::Piece { piece: piece.clone(), unique: false },
        }
    }
}

/// One frame of a (possibly multi-part) message. Cheap to clone.
pub struct Msg {
    body: Body,
    /// Flag bits (MORE and the internal ones), widened to 32 bits so that `flags` and
    /// `routing_id` fill the 8 bytes after the body with no padding: a move of a `Msg` is then
    /// whole 16-byte copies, with no odd tail.
    flags: u32,
    /// CLIENT/SERVER and PEER: the peer a message came from or goes to (0: none). Fits in
    /// what was padding, so `Msg` does not grow.
    routing_id: u32,
    /// The properties of the connection it arrived on (`gets`); one `Arc` per connection,
    /// attached by the socket's pipe end on the application thread.
    props: Option<Arc<Properties>>,
}

const _: () = assert!(std::mem::size_of::<Msg>() <= 56);
const _: () = assert!(std::mem::align_of::<Msg>() <= 8);

impl Clone for Msg {
    /// A frame that owns nothing (an inline body, no properties) is copied whole, in the
    /// aligned pieces any later move of it loads: built field by field, the copy's narrow
    /// stores stalled the first move that followed (a store-forwarding stall per clone).
    #[inline]
    fn clone(&self) -> Msg {
        if !self.needs_drop() {
            // SAFETY: the frame owns nothing, so a bitwise copy is a clone and neither copy's
            // drop frees anything.
            return unsafe { std::ptr::read(self) };
        }
        self.clone_owning()
    }
}

impl Msg {
    #[inline(never)]
    fn clone_owning(&self) -> Msg {
        Msg { body: self.body.clone(), flags: self.flags, routing_id: self.routing_id, props: self.props.clone() }
    }
}

impl Msg {
    /// An empty frame.
    #[inline]
    pub const fn new() -> Msg {
        Msg { body: Body::Inline { len: 0, buf: [0; INLINE_CAP] }, flags: 0, routing_id: 0, props: None }
    }

    /// A zero-filled frame of `len` bytes, to be written through [`Msg::as_mut_slice`].
    #[inline]
    pub fn with_size(len: usize) -> Msg {
        if len <= INLINE_CAP {
            Msg { body: Body::Inline { len: len as u8, buf: [0; INLINE_CAP] }, flags: 0, routing_id: 0, props: None }
        } else {
            Msg::with_size_large(len)
        }
    }

    /// [`Msg::with_size`] without clearing a body that does not fit inline: libzmq's
    /// `zmq_msg_init_size`, which "shall not clear the message data" for performance.
    /// Clearing 64 KiB costs more than the rest of sending it (a fifth of the sender's time
    /// in the 64 KiB throughput test); at 256 B it is a memset call per message.
    ///
    /// # Safety
    /// The caller must write all `len` bytes (through [`Msg::as_mut_slice`]'s pointer, as a
    /// C program does through `zmq_msg_data`) before the body is read, sent or cloned.
    #[inline]
    pub unsafe fn with_size_uninit(len: usize) -> Msg {
        let mut m = MaybeUninit::uninit();
        // SAFETY: forwarded contract; `write_with_size_uninit` writes `m`.
        unsafe {
            Msg::write_with_size_uninit(&mut m, len);
            m.assume_init()
        }
    }

    /// [`Msg::with_size_uninit`] built in `out` (what it held is not dropped), for a caller
    /// whose frame lives elsewhere (`zmq_msg_init_size`): a frame returned through memory and
    /// copied over would be read with loads wider than the stores that built it, each waiting
    /// for those stores to reach the cache.
    ///
    /// # Safety
    /// As [`Msg::with_size_uninit`].
    #[inline]
    pub unsafe fn write_with_size_uninit(out: &mut MaybeUninit<Msg>, len: usize) {
        if len <= INLINE_CAP {
            out.write(Msg::with_size(len));
        } else {
            // SAFETY: forwarded contract.
            unsafe { Msg::write_with_size_uninit_large(out, len) }
        }
    }

    #[inline(never)]
    unsafe fn write_with_size_uninit_large(out: &mut MaybeUninit<Msg>, len: usize) {
        // SAFETY: the caller's contract is `arena::uninit`'s.
        let piece = unsafe { arena::uninit(len) };
        out.write(Msg { body: Body::Piece { piece, unique: true }, flags: 0, routing_id: 0, props: None });
    }

    /// `with_size` for bodies that do not fit inline, out of line like `copy_large`.
    #[inline(never)]
    fn with_size_large(len: usize) -> Msg {
        Msg { body: Body::Piece { piece: arena::zeroed(len), unique: true }, flags: 0, routing_id: 0, props: None }
    }

    /// A frame holding a copy of `data` (inline when small).
    #[inline]
    pub fn copy_from(data: &[u8]) -> Msg {
        if data.len() <= INLINE_CAP {
            let mut buf = [0u8; INLINE_CAP];
            buf[..data.len()].copy_from_slice(data);
            Msg { body: Body::Inline { len: data.len() as u8, buf }, flags: 0, routing_id: 0, props: None }
        } else {
            Msg::copy_large(data)
        }
    }

    /// An inline frame of the first `len` bytes of `window` (`len <= INLINE_CAP`), taken with
    /// one fixed-size copy of the whole window: for a decoder whose buffer holds more bytes
    /// after the body. The bytes past `len` are kept in the inline buffer, unspecified as
    /// [`Msg::inline_body`] says, and never part of the body. `copy_from` zeroes the buffer
    /// and then calls memcpy for the length, and moving the frame right after loads across
    /// those overlapping stores: a store-forwarding stall per small frame.
    #[inline(always)]
    pub(crate) fn inline_from_window(window: &[u8; INLINE_CAP], len: usize) -> Msg {
        debug_assert!(len <= INLINE_CAP);
        Msg { body: Body::Inline { len: len as u8, buf: *window }, flags: 0, routing_id: 0, props: None }
    }

    /// [`Msg::copy_from`] for `len` bytes at `ptr`, as a C caller passes them. A small body is
    /// loaded into registers a word at a time and stored once, whole, into the frame:
    /// `copy_from` zeroes the inline buffer, calls memcpy for the length and moves the frame
    /// right after, loading across those narrower stores (a store-forwarding stall).
    ///
    /// # Safety
    /// `ptr` must be valid for reads of `len` bytes (it may dangle when `len` is 0).
    #[inline]
    pub unsafe fn copy_from_raw(ptr: *const u8, len: usize) -> Msg {
        if len != 0 && len <= INLINE_CAP {
            // SAFETY: the caller's contract.
            let words = unsafe { small_words(ptr, len) };
            let mut window = [0u8; INLINE_CAP];
            for (i, w) in words.iter().enumerate() {
                let at = i * 8;
                let n = (INLINE_CAP - at).min(8);
                window[at..at + n].copy_from_slice(&w.to_le_bytes()[..n]);
            }
            return Msg::inline_from_window(&window, len);
        }
        // SAFETY: the caller's contract.
        Msg::copy_from(if len == 0 { &[] } else { unsafe { std::slice::from_raw_parts(ptr, len) } })
    }

    /// `copy_from` for bodies that do not fit inline: out of line, so the small case stays
    /// small enough to inline into decoders.
    #[inline(never)]
    fn copy_large(data: &[u8]) -> Msg {
        Msg { body: Body::Piece { piece: arena::copy(data), unique: false }, flags: 0, routing_id: 0, props: None }
    }

    /// A frame whose body is `piece`, which no other frame refers to (a body decoded off the
    /// wire into the connection's chunk).
    #[inline(always)]
    pub(crate) fn from_piece(piece: Piece) -> Msg {
        Msg { body: Body::Piece { piece, unique: true }, flags: 0, routing_id: 0, props: None }
    }

    /// A frame whose body is `bytes`, shared without copying (small bodies are moved inline so
    /// the frame does not keep a large receive buffer alive for a few bytes).
    #[inline]
    pub fn from_bytes(bytes: Bytes) -> Msg {
        if bytes.len() <= INLINE_CAP {
            Msg::copy_from(&bytes)
        } else {
            Msg { body: Body::Shared(bytes), flags: 0, routing_id: 0, props: None }
        }
    }

    /// A frame whose body is `bytes` whatever its length, never copied (not even a small one
    /// into the frame): caller-owned memory (`zmq_msg_init_data`), whose data pointer must be
    /// the caller's and whose release must wait until the last frame sharing it is gone (for
    /// a sent frame: until it has been written out).
    pub fn from_bytes_uncopied(bytes: Bytes) -> Msg {
        Msg { body: Body::Shared(bytes), flags: 0, routing_id: 0, props: None }
    }

    /// A frame over static data, never copied.
    pub fn from_static(data: &'static [u8]) -> Msg {
        Msg::from_bytes(Bytes::from_static(data))
    }

    /// Body length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        match &self.body {
            Body::Inline { len, .. } => *len as usize,
            Body::Shared(b) => b.len(),
            Body::Piece { piece, .. } => piece.len(),
        }
    }

    /// True when the body is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The body.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        match &self.body {
            Body::Inline { len, buf } => &buf[..*len as usize],
            Body::Shared(b) => b,
            Body::Piece { piece, .. } => piece.as_slice(),
        }
    }

    /// Drops a body that is not inline (it may be large), keeping the flags and properties:
    /// for a frame kept to be received into again.
    #[inline]
    pub fn release_body(&mut self) {
        if !matches!(self.body, Body::Inline { .. }) {
            self.body = Body::Inline { len: 0, buf: [0; INLINE_CAP] };
        }
    }

    /// An inline body as its length and the whole fixed-size buffer (only the first `len`
    /// bytes are the body; the rest is unspecified): lets a caller copy a constant
    /// [`INLINE_CAP`] bytes instead of calling memcpy for a length known only at run time.
    #[inline]
    pub fn inline_body(&self) -> Option<(u8, &[u8; INLINE_CAP])> {
        match &self.body {
            Body::Inline { len, buf } => Some((*len, buf)),
            _ => None,
        }
    }

    /// The body, writable. A shared body is copied first unless this frame is its only owner
    /// (copy on write), so writing never changes what another clone sees.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        match &mut self.body {
            Body::Shared(b) if !b.is_unique() => *b = Bytes::from(b.to_vec()),
            Body::Piece { piece, unique } if !*unique => {
                *piece = arena::copy(piece.as_slice());
                *unique = true;
            }
            _ => {}
        }
        match &mut self.body {
            Body::Inline { len, buf } => &mut buf[..*len as usize],
            // SAFETY: a unique piece is referred to by this frame alone (made so just above
            // for a shared one), and `&mut self` keeps it from being cloned meanwhile.
            Body::Piece { piece, .. } => unsafe { piece.as_mut_slice() },
            Body::Shared(b) => {
                let (ptr, len) = (b.as_ptr() as *mut u8, b.len());
                // SAFETY: `b` is the unique owner of its heap buffer (checked or made so above:
                // `is_unique` is false for static and shared buffers, which were replaced by a
                // fresh Vec copy). No other reference into the buffer exists, and the returned
                // slice borrows `self` mutably, so nobody can clone or read it meanwhile.
                unsafe { std::slice::from_raw_parts_mut(ptr, len) }
            }
        }
    }

    /// The body as `Bytes` (copies an inline body; shares a large one).
    pub fn to_bytes(&self) -> Bytes {
        match &self.body {
            Body::Inline { len, buf } => Bytes::copy_from_slice(&buf[..*len as usize]),
            Body::Shared(b) => b.clone(),
            Body::Piece { piece, unique: true } => Bytes::copy_from_slice(piece.as_slice()),
            Body::Piece { piece, unique: false } => piece.clone().into_bytes(),
        }
    }

    /// Consumes the frame, returning its body as `Bytes`.
    pub fn into_bytes(self) -> Bytes {
        match self.body {
            Body::Shared(b) => b,
            Body::Piece { piece, .. } => piece.into_bytes(),
            Body::Inline { .. } => self.to_bytes(),
        }
    }

    /// True when more frames of this message follow (libzmq's `zmq_msg_more`).
    #[inline]
    pub fn more(&self) -> bool {
        self.flags & MORE as u32 != 0
    }

    /// Marks whether more frames follow.
    ///
    /// Stores only when the flag changes: frames are usually copied whole (into a pipe slot)
    /// right after this call, and that wide load of a frame would wait for a narrower store
    /// to its flags to reach the cache (a failed store-to-load forward).
    #[inline]
    pub fn set_more(&mut self, more: bool) {
        let flags = if more { self.flags | MORE as u32 } else { self.flags & !(MORE as u32) };
        if flags != self.flags {
            self.flags = flags;
        }
    }

    #[cfg(test)]
    fn is_unique_for_test(&self) -> bool {
        matches!(self.body, Body::Piece { unique: true, .. })
    }

    /// True when the body is shared with other frames or a receive buffer.
    pub fn is_shared(&self) -> bool {
        matches!(self.body, Body::Shared(_) | Body::Piece { unique: false, .. })
    }

    /// Fan-out, first step: freezes a unique body and, for a counted one, takes the
    /// references of `n` shares with one atomic add, for `n` calls of
    /// [`Msg::write_share_into`].
    #[inline]
    pub(crate) fn prepare_shares(&mut self, n: usize) {
        self.freeze();
        if let Body::Piece { piece, .. } = &self.body {
            piece.take_refs(n);
        }
    }

    /// Writes a frame sharing this one's body into `out` (what it held is not dropped).
    ///
    /// An inline or counted body is copied bit for bit, the whole frame at once from where
    /// it has long been: a share built field by field on the stack and then copied would be
    /// read with loads wider than the stores that built it, each waiting for them to reach
    /// the cache.
    ///
    /// # Safety
    /// [`Msg::prepare_shares`] was called for at least as many shares as are written.
    #[inline(always)]
    pub(crate) unsafe fn write_share_into(&self, out: &mut MaybeUninit<Msg>) {
        match &self.body {
            Body::Inline { .. } | Body::Piece { .. } => {
                if let Some(p) = &self.props {
                    // The copy's count: it owns a reference from here on.
                    std::mem::forget(Arc::clone(p));
                }
                // SAFETY: an inline body is plain bytes; a piece's reference for this copy
                // was taken by `prepare_shares` (the caller's contract), and the properties'
                // just above: the copy owns what it points to, as a clone would.
                unsafe { std::ptr::copy_nonoverlapping(self as *const Msg, out.as_mut_ptr(), 1) };
            }
            Body::Shared(_) => {
                out.write(self.clone());
            }
        }
    }

    /// [`Msg::write_share_into`] returning the frame.
    ///
    /// # Safety
    /// As [`Msg::write_share_into`].
    pub(crate) unsafe fn share(&self) -> Msg {
        let mut m = MaybeUninit::uninit();
        // SAFETY: forwarded contract; `m` is written.
        unsafe {
            self.write_share_into(&mut m);
            m.assume_init()
        }
    }

    /// Turns a unique body into a shared one (no copy) before fan-out: from then on clones
    /// share it.
    #[inline]
    pub(crate) fn freeze(&mut self) {
        if let Body::Piece { unique, .. } = &mut self.body {
            *unique = false;
        }
    }

    /// The routing id of the peer a SERVER or PEER socket received this message from (libzmq's
    /// `zmq_msg_routing_id`); 0 when there is none.
    #[inline]
    pub fn routing_id(&self) -> u32 {
        self.routing_id
    }

    /// Addresses the message to a peer of a SERVER or PEER socket (`zmq_msg_set_routing_id`).
    /// 0 is not a valid routing id: `Err(Invalid)`, as libzmq.
    pub fn set_routing_id(&mut self, id: u32) -> crate::Result<()> {
        if id == 0 {
            return Err(crate::Error::Invalid);
        }
        self.routing_id = id;
        Ok(())
    }

    #[inline]
    pub(crate) fn clear_routing_id(&mut self) {
        self.routing_id = 0;
    }

    /// A routing-id or command frame: one test on the encoder's hot path.
    #[inline]
    pub(crate) fn is_internal(&self) -> bool {
        self.flags & (ROUTING_ID | COMMAND) as u32 != 0
    }

    #[inline]
    pub(crate) fn is_command(&self) -> bool {
        self.flags & COMMAND as u32 != 0
    }

    #[inline]
    pub(crate) fn set_flags(&mut self, flags: u8) {
        self.flags = flags as u32;
    }

    #[inline]
    pub(crate) fn is_routing_id(&self) -> bool {
        self.flags & ROUTING_ID as u32 != 0
    }

    /// A property of the connection this message arrived on (libzmq's `zmq_msg_gets`):
    /// "Socket-Type", "Identity", "Peer-Address", "User-Id", or any property the peer or a
    /// ZAP handler supplied. `None` if there is no such property or the message did not come
    /// from a connection (sent, built, or from inproc).
    pub fn gets(&self, name: &str) -> Option<&[u8]> {
        self.props.as_ref()?.get(name)
    }

    /// All the properties of the connection this message arrived on.
    pub fn properties(&self) -> Option<&Properties> {
        self.props.as_deref()
    }

    #[inline]
    pub(crate) fn props_arc(&self) -> Option<&Arc<Properties>> {
        self.props.as_ref()
    }

    /// The properties as [`Msg::replace_with_props`] takes them.
    #[inline]
    pub(crate) fn props_option(&self) -> &Option<Arc<Properties>> {
        &self.props
    }

    #[inline]
    pub(crate) fn set_props(&mut self, props: Option<Arc<Properties>>) {
        self.props = props;
    }

    /// True when dropping this frame has work to do (a shared or unique body, or connection
    /// properties): an inline or empty frame owns nothing.
    #[inline(always)]
    pub fn needs_drop(&self) -> bool {
        !matches!(self.body, Body::Inline { .. }) || self.props.is_some()
    }

    /// Drops the frame, its body's reference to a chunk given up through `rel` (batched with
    /// the others of its run; see [`crate::chunk::Releases`]).
    #[inline]
    pub(crate) fn release_into(self, rel: &mut crate::chunk::Releases) {
        match self.body {
            Body::Piece { piece, .. } => rel.give(piece),
            body => drop(body),
        }
    }

    /// Drops the frame with the common case inline: an inline or empty frame (most frames
    /// on the small-message paths, and every frame a send left behind) is forgotten after one
    /// test instead of a call to the out-of-line drop glue.
    #[inline(always)]
    pub fn discard(self) {
        if self.needs_drop() {
            drop_slow(self);
        } else {
            // Owns nothing: forgetting it is the whole drop.
            std::mem::forget(self);
        }
    }

    /// Replaces the frame with `other`, dropping the old one with the inline fast path of
    /// [`Msg::discard`] (and without moving it out first).
    #[inline(always)]
    pub fn replace_with(&mut self, other: Msg) {
        if self.needs_drop() {
            clear_slow(self);
        }
        // `self` owns nothing now: overwriting it is the whole drop.
        std::mem::forget(std::mem::replace(self, other));
    }
}

impl Msg {
    /// [`Msg::replace_with`] for a frame read from a pipe, which gets the connection's
    /// `props`: when the frame being replaced already holds the same properties (the caller
    /// reuses its `Msg` for each receive, as `zmq_msg_recv` loops do), their reference passes
    /// from the old frame to the new one instead of a count up and a count down.
    ///
    /// The properties are stored after the frame is copied in, not into `m` before: the
    /// copy's wide loads would wait for that narrower store to reach the cache.
    #[inline(always)]
    pub(crate) fn replace_with_props(&mut self, m: Msg, props: &Option<Arc<Properties>>) {
        let same = match (&self.props, props) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        let props = if same { self.props.take() } else { props.clone() };
        // Looked at before the copy: reading the field back after it would wait as well.
        let had = m.props.is_some();
        self.replace_with(m);
        if had {
            drop(std::mem::replace(&mut self.props, props));
        } else {
            // SAFETY: `self.props` is the `None` just copied from `m`: nothing to drop.
            unsafe { std::ptr::write(&mut self.props, props) };
        }
    }
}

/// Drops what `m` owns, leaving it empty (and owning nothing), out of line.
#[inline(never)]
fn clear_slow(m: &mut Msg) {
    *m = Msg::new();
}

/// The drop glue of a frame that owns something, kept out of line.
#[inline(never)]
fn drop_slow(m: Msg) {
    drop(m);
}

impl Default for Msg {
    #[inline]
    fn default() -> Msg {
        Msg::new()
    }
}

impl Deref for Msg {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for Msg {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl PartialEq for Msg {
    fn eq(&self, other: &Msg) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl Eq for Msg {}

impl PartialEq<[u8]> for Msg {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_slice() == other
    }
}
impl PartialEq<&[u8]> for Msg {
    fn eq(&self, other: &&[u8]) -> bool {
        self.as_slice() == *other
    }
}
impl<const N: usize> PartialEq<&[u8; N]> for Msg {
    fn eq(&self, other: &&[u8; N]) -> bool {
        self.as_slice() == &other[..]
    }
}
impl PartialEq<&str> for Msg {
    fn eq(&self, other: &&str) -> bool {
        self.as_slice() == other.as_bytes()
    }
}

impl fmt::Debug for Msg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let body = self.as_slice();
        let shown = &body[..body.len().min(32)];
        write!(
            f,
            "Msg({} B{}, {:?}{})",
            body.len(),
            if self.more() { ", more" } else { "" },
            String::from_utf8_lossy(shown),
            if body.len() > 32 { "…" } else { "" }
        )
    }
}

impl From<&[u8]> for Msg {
    fn from(d: &[u8]) -> Msg {
        Msg::copy_from(d)
    }
}
impl<const N: usize> From<&[u8; N]> for Msg {
    fn from(d: &[u8; N]) -> Msg {
        Msg::copy_from(d)
    }
}
impl From<&str> for Msg {
    fn from(s: &str) -> Msg {
        Msg::copy_from(s.as_bytes())
    }
}
impl From<String> for Msg {
    fn from(s: String) -> Msg {
        Msg::from(s.into_bytes())
    }
}
impl From<Vec<u8>> for Msg {
    fn from(v: Vec<u8>) -> Msg {
        if v.len() <= INLINE_CAP {
            Msg::copy_from(&v)
        } else {
            Msg { body: Body::Shared(Bytes::from(v)), flags: 0, routing_id: 0, props: None }
        }
    }
}
impl From<Bytes> for Msg {
    fn from(b: Bytes) -> Msg {
        Msg::from_bytes(b)
    }
}
impl From<&Msg> for Msg {
    fn from(m: &Msg) -> Msg {
        let mut c = m.clone();
        c.flags = 0;
        c.routing_id = 0;
        c
    }
}

/// The `len` bytes at `p` (1 to `INLINE_CAP`) as little-endian words, zero past `len`, read
/// with loads that stay within them (a word that would cross the end is read as the last
/// eight bytes and shifted; under eight bytes, as two overlapping halves).
///
/// # Safety
/// `p` must be valid for reads of `len` bytes.
#[inline(always)]
unsafe fn small_words(p: *const u8, len: usize) -> [u64; INLINE_CAP.div_ceil(8)] {
    debug_assert!(len != 0 && len <= INLINE_CAP);
    // SAFETY: every call below reads `N` bytes at `at` with `at + N <= len`.
    let rd = |at: usize, n: usize| -> u64 {
        unsafe {
            match n {
                8 => u64::from_le(p.add(at).cast::<u64>().read_unaligned()),
                4 => u64::from(u32::from_le(p.add(at).cast::<u32>().read_unaligned())),
                2 => u64::from(u16::from_le(p.add(at).cast::<u16>().read_unaligned())),
                _ => u64::from(*p.add(at)),
            }
        }
    };
    let mut words = [0u64; INLINE_CAP.div_ceil(8)];
    if len < 8 {
        words[0] = match len {
            4.. => rd(0, 4) | rd(len - 4, 4) << (8 * (len - 4)),
            2.. => rd(0, 2) | rd(len - 2, 2) << (8 * (len - 2)),
            _ => rd(0, 1),
        };
        return words;
    }
    for (i, w) in words.iter_mut().enumerate() {
        let at = i * 8;
        if at + 8 <= len {
            *w = rd(at, 8);
        } else if at < len {
            *w = rd(len - 8, 8) >> (8 * (at + 8 - len));
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clone keeps the body, flags and routing id whichever way it is made: copied whole
    /// (an inline body, no properties) or field by field (properties, a shared or unique
    /// body), each owned part counted once more and given up with the clone.
    #[test]
    fn a_clone_is_equal_and_owns_its_parts() {
        let props = Arc::new(Properties::default());
        let big = Bytes::from(vec![3u8; 100]);
        let makes: [&dyn Fn() -> Msg; 4] = [
            &|| Msg::copy_from(b"abc"),
            &|| {
                let mut m = Msg::copy_from(b"abc");
                m.set_props(Some(props.clone()));
                m
            },
            &|| Msg::from(big.clone()),
            &|| Msg::copy_from(&[5u8; 300]),
        ];
        for make in makes {
            let mut m = make();
            m.set_more(true);
            m.set_routing_id(7).unwrap();
            let c = m.clone();
            assert_eq!(&c[..], &m[..]);
            assert!(c.more());
            assert_eq!(c.routing_id(), 7);
            assert_eq!(c.props.is_some(), m.props.is_some());
            drop(m);
            assert_eq!(c.props.as_ref().map(Arc::strong_count), c.props.as_ref().map(|_| 2));
            drop(c);
            assert_eq!(Arc::strong_count(&props), 1);
            assert!(big.is_unique(), "the shared body's count came back");
        }
    }

    #[test]
    fn copy_from_raw_matches_copy_from_at_every_small_length() {
        for len in 0..=INLINE_CAP + 2 {
            // A body that ends where its allocation ends, so a read past it would be out of
            // bounds (and reported by tools that check).
            let data: Box<[u8]> = (0..len).map(|i| (i as u8).wrapping_mul(37).wrapping_add(11)).collect();
            // SAFETY: `data` holds `len` bytes.
            let m = unsafe { Msg::copy_from_raw(data.as_ptr(), len) };
            assert_eq!(&m[..], &data[..], "length {len}");
            assert_eq!(m.len(), len);
            assert!(!m.more());
        }
    }

    #[test]
    fn shares_copy_every_kind_of_body_and_count_what_they_own() {
        let props = Arc::new(Properties::default());
        let bodies = [
            Msg::copy_from(b"small"),
            Msg::copy_from(&[3u8; 300]),                   // a counted piece
            Msg::from_bytes(Bytes::from(vec![4u8; 9000])), // a shared buffer
        ];
        for mut m in bodies {
            m.set_more(true);
            m.set_props(Some(props.clone()));
            let n = 5;
            m.prepare_shares(n);
            let shares: Vec<Msg> = (0..n)
                .map(|_| {
                    let mut out = MaybeUninit::uninit();
                    // SAFETY: n shares prepared, n written; `out` is written.
                    unsafe {
                        m.write_share_into(&mut out);
                        out.assume_init()
                    }
                })
                .collect();
            assert_eq!(Arc::strong_count(&props), 2 + n);
            for s in &shares {
                assert_eq!(&s[..], &m[..]);
                assert!(s.more());
                assert!(!s.is_unique_for_test(), "a share is never written in place");
            }
            drop(shares);
            drop(m);
            assert_eq!(Arc::strong_count(&props), 1, "every share released what it held");
        }
    }

    #[test]
    fn small_bodies_are_inline_and_large_are_shared() {
        assert!(!Msg::from(&[7u8; INLINE_CAP][..]).is_shared());
        let big = Msg::from(vec![1u8; INLINE_CAP + 1]);
        assert!(big.is_shared());
        let c = big.clone();
        assert_eq!(c.as_ptr(), big.as_ptr(), "clone shares the body");
    }

    #[test]
    fn write_is_copy_on_write() {
        let a = Msg::from(vec![1u8; 100]);
        let mut b = a.clone();
        b.as_mut_slice()[0] = 9;
        assert_eq!(a[0], 1);
        assert_eq!(b[0], 9);
        let mut s = Msg::with_size(1000);
        let p = s.as_ptr();
        s.as_mut_slice()[999] = 5;
        assert_eq!(s.as_ptr(), p, "unique body is written in place");
        let mut st = Msg::from_static(&[3u8; 64]);
        st.as_mut_slice()[0] = 4;
        assert_eq!(st[0], 4);
    }

    #[test]
    fn more_flag() {
        let mut m = Msg::from("x");
        assert!(!m.more());
        m.set_more(true);
        assert!(m.more());
        m.set_more(false);
        assert!(!m.more());
    }
}
