//! [`Message`]: the frames of one ZeroMQ message, sent and received whole.
//!
//! Most messages have one frame, so the first lives inline and only a multi-part message
//! allocates a vector for the rest: receiving a single-frame message through the async API
//! costs no allocation beyond the frame's own.

use crate::msg::Msg;
use bytes::Bytes;
use std::mem::MaybeUninit;
use std::ops::{Deref, DerefMut};

/// A multi-part message: one or more frames ([`Msg`]s) that travel together.
///
/// It dereferences to a slice of frames, so `len`, indexing, `iter`, `first` and `last` work as
/// on `[Msg]`. A message built with [`Message::new`] has no frame until one is pushed; sending it
/// empty is [`Error::Invalid`](crate::Error::Invalid).
///
/// ```
/// use oxmq::asynch::Message;
/// let mut m = Message::from("key");
/// m.push("value");
/// assert_eq!(m.len(), 2);
/// assert_eq!(m[0], "key");
/// assert_eq!(m[1], "value");
/// let frames: Vec<oxmq::Msg> = m.into();
/// assert_eq!(frames.len(), 2);
/// ```
pub struct Message {
    /// Dropped by `Message`'s own `Drop`, which costs a sent (empty) message no call.
    frames: Slot,
}

/// `Frames`, always initialized, in a `MaybeUninit` for its layout alone: it offers no niche,
/// so `Result<Message>` and `Poll<Result<Message>>` keep their tag in a word of their own
/// (8 bytes more) instead of in the frame's first byte. With the tag there, each move through
/// them stored that byte apart and copied the rest from an odd offset, and the next move's
/// 16-byte loads straddled those stores (a store-forwarding stall per move).
#[repr(transparent)]
struct Slot(MaybeUninit<Frames>);

impl Slot {
    #[inline(always)]
    fn new(f: Frames) -> Slot {
        Slot(MaybeUninit::new(f))
    }
}

impl Deref for Slot {
    type Target = Frames;
    #[inline(always)]
    fn deref(&self) -> &Frames {
        // SAFETY: a `Slot` is made initialized (`Slot::new`) and stays so until `Message`'s
        // drop, after which it is not used.
        unsafe { self.0.assume_init_ref() }
    }
}

impl DerefMut for Slot {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Frames {
        // SAFETY: as in `deref`.
        unsafe { self.0.assume_init_mut() }
    }
}

impl Default for Message {
    #[inline]
    fn default() -> Message {
        Message { frames: Slot::new(Frames::None) }
    }
}

impl Clone for Message {
    fn clone(&self) -> Message {
        Message { frames: Slot::new((*self.frames).clone()) }
    }
}

#[derive(Default, Debug, Clone)]
enum Frames {
    #[default]
    None,
    One(Msg),
    Many(Vec<Msg>),
}

impl Message {
    /// A message with no frame yet.
    pub fn new() -> Message {
        Message::default()
    }

    /// Appends a frame.
    pub fn push(&mut self, frame: impl Into<Msg>) {
        let frame = frame.into();
        *self.frames = match std::mem::take(&mut *self.frames) {
            Frames::None => Frames::One(frame),
            Frames::One(first) => Frames::Many(vec![first, frame]),
            Frames::Many(mut v) => {
                v.push(frame);
                Frames::Many(v)
            }
        };
    }

    /// Builder form of [`Message::push`].
    pub fn with(mut self, frame: impl Into<Msg>) -> Message {
        self.push(frame);
        self
    }

    /// The frames as a vector.
    pub fn into_vec(mut self) -> Vec<Msg> {
        match std::mem::take(&mut *self.frames) {
            Frames::None => Vec::new(),
            Frames::One(m) => vec![m],
            Frames::Many(v) => v,
        }
    }

    /// The frames' bodies as `Bytes` (shared where the frame's body is, copied where it is
    /// small enough to live inside the frame).
    pub fn to_bytes(&self) -> Vec<Bytes> {
        self.iter().map(Msg::to_bytes).collect()
    }

    /// Empties the message after its frames were sent: a sent frame is left owning nothing, so
    /// it is forgotten rather than dropped (the drop's tests were a tenth of an async 1 B send).
    #[inline(always)]
    pub(super) fn clear_sent(&mut self) {
        if let Frames::One(m) = &*self.frames {
            if !m.needs_drop() {
                // SAFETY: the frame owns nothing, so overwriting it without its drop leaks
                // nothing (and copies nothing out first, as a take would).
                unsafe { std::ptr::write(&mut *self.frames, Frames::None) };
                return;
            }
        }
        *self.frames = Frames::None;
    }

    /// The frame of a message built with one: `try_recv`'s, without the test a slice index
    /// makes of which variant it is.
    #[inline(always)]
    pub(super) fn first_of_one(&mut self) -> &mut Msg {
        match &mut *self.frames {
            Frames::One(m) => m,
            _ => unreachable!("built with one frame"),
        }
    }

    /// The frame of a single-frame message.
    #[inline]
    pub(super) fn single_mut(&mut self) -> Option<&mut Msg> {
        match &mut *self.frames {
            Frames::One(m) => Some(m),
            _ => None,
        }
    }

    /// Takes the first frame out, leaving the rest (ROUTER's routing id, a DGRAM address).
    /// None when the message has no frame.
    pub fn pop_front(&mut self) -> Option<Msg> {
        match std::mem::take(&mut *self.frames) {
            Frames::None => None,
            Frames::One(m) => Some(m),
            Frames::Many(mut v) => {
                let first = v.remove(0);
                *self.frames = match v.len() {
                    0 => Frames::None,
                    1 => Frames::One(v.pop().expect("one frame")),
                    _ => Frames::Many(v),
                };
                Some(first)
            }
        }
    }
}

impl Drop for Message {
    /// A sent message (left empty) costs one test, inline in its owner's drop; one with
    /// frames goes to `drop_frames`.
    #[inline(always)]
    fn drop(&mut self) {
        if !matches!(&*self.frames, Frames::None) {
            // SAFETY: called once, here, and `self` is not used after `drop`.
            unsafe { self.drop_frames() }
        }
    }
}

impl Message {
    /// Drops the frames: a one-frame message, the common case, without the drop glue's calls
    /// (they were a tenth of an async 1 B receive): a received frame's connection properties
    /// given up, then nothing more when its body is inline.
    ///
    /// # Safety
    /// Called once, from `Drop::drop`: the frames are not used after it.
    #[inline(never)]
    unsafe fn drop_frames(&mut self) {
        match &mut *self.frames {
            Frames::None => return,
            Frames::One(m) => {
                m.set_props(None);
                if !m.needs_drop() {
                    // The frame owns nothing (an inline body, no properties): nothing to drop.
                    return;
                }
            }
            Frames::Many(_) => {}
        }
        // SAFETY: the caller's contract: the frames are dropped here, once.
        unsafe { self.frames.0.assume_init_drop() }
    }
}

impl std::fmt::Debug for Message {
    /// The frames, as a list.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Message").field(&&**self).finish()
    }
}

impl Deref for Message {
    type Target = [Msg];

    #[inline]
    fn deref(&self) -> &[Msg] {
        match &*self.frames {
            Frames::None => &[],
            Frames::One(m) => std::slice::from_ref(m),
            Frames::Many(v) => v,
        }
    }
}

impl DerefMut for Message {
    #[inline]
    fn deref_mut(&mut self) -> &mut [Msg] {
        match &mut *self.frames {
            Frames::None => &mut [],
            Frames::One(m) => std::slice::from_mut(m),
            Frames::Many(v) => v,
        }
    }
}

impl From<Msg> for Message {
    #[inline]
    fn from(m: Msg) -> Message {
        Message { frames: Slot::new(Frames::One(m)) }
    }
}

impl From<Vec<Msg>> for Message {
    fn from(mut v: Vec<Msg>) -> Message {
        let frames = match v.len() {
            0 => Frames::None,
            1 => Frames::One(v.pop().expect("one frame")),
            _ => Frames::Many(v),
        };
        Message { frames: Slot::new(frames) }
    }
}

impl From<Message> for Vec<Msg> {
    fn from(m: Message) -> Vec<Msg> {
        m.into_vec()
    }
}

macro_rules! single_frame {
    ($($t:ty),*) => {$(
        impl From<$t> for Message {
            fn from(v: $t) -> Message {
                Message::from(Msg::from(v))
            }
        }
    )*};
}
single_frame!(&str, String, &[u8], Vec<u8>, Bytes, &Msg);

impl<const N: usize> From<&[u8; N]> for Message {
    fn from(v: &[u8; N]) -> Message {
        Message::from(Msg::from(v))
    }
}

impl<T: Into<Msg>, const N: usize> From<[T; N]> for Message {
    /// The parts in order, one frame each.
    fn from(parts: [T; N]) -> Message {
        parts.into_iter().collect()
    }
}

impl<T: Into<Msg>> FromIterator<T> for Message {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Message {
        let mut m = Message::new();
        for p in iter {
            m.push(p);
        }
        m
    }
}

impl IntoIterator for Message {
    type Item = Msg;
    type IntoIter = std::vec::IntoIter<Msg>;

    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

impl<'a> IntoIterator for &'a Message {
    type Item = &'a Msg;
    type IntoIter = std::slice::Iter<'a, Msg>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_grow_and_shrink() {
        let mut m = Message::new();
        assert!(m.is_empty());
        m.push("a");
        assert_eq!(m.len(), 1);
        m.push("b");
        m.push("c");
        assert_eq!(m.iter().map(|f| f.as_slice().to_vec()).collect::<Vec<_>>(), [b"a", b"b", b"c"]);
        assert_eq!(m.pop_front().unwrap(), "a");
        assert_eq!(m.pop_front().unwrap(), "b");
        assert_eq!(m.len(), 1);
        assert_eq!(m.pop_front().unwrap(), "c");
        assert!(m.pop_front().is_none());
        let m: Message = ["x", "y"].into();
        assert_eq!(m.into_vec().len(), 2);
        assert_eq!(Message::from(Vec::<Msg>::new()).len(), 0);
    }

    /// Dropping a message gives up everything its frames hold, whichever way its `Drop` takes:
    /// a received frame's properties with an inline body (the quick way) or a large one, and
    /// the frames of a multi-part message.
    #[test]
    fn a_dropped_message_releases_what_its_frames_hold() {
        let props = std::sync::Arc::new(crate::properties::Properties::default());
        let received = |body: &[u8]| {
            let mut f = Msg::copy_from(body);
            f.set_props(Some(props.clone()));
            f
        };
        let big = Bytes::from(vec![7u8; 1000]);
        let makes: [&dyn Fn() -> Message; 4] = [
            &|| Message::from(received(b"x")),
            &|| Message::from(received(&big)),
            &|| Message::from(Msg::from(big.clone())),
            &|| Message::from(vec![received(b"a"), received(&big)]),
        ];
        for make in makes {
            drop(make());
            assert_eq!(std::sync::Arc::strong_count(&props), 1);
            assert!(big.is_unique(), "the large body's share went with its frame");
        }
        let mut m = Message::from(received(b"y"));
        assert_eq!(m.pop_front().unwrap(), "y");
        assert_eq!(std::sync::Arc::strong_count(&props), 1);
        assert!(m.is_empty());
    }

    #[test]
    fn debug_lists_the_frames() {
        let m: Message = ["a", "b"].into();
        assert_eq!(format!("{m:?}"), format!("Message({:?})", [Msg::from("a"), Msg::from("b")]));
        assert_eq!(format!("{:?}", Message::new()), "Message([])");
    }
}
