//! Subscription tries.
//!
//! [`Trie`] answers "does any subscription prefix this message?" for a SUB socket, with a
//! reference count per prefix (subscribing twice needs two unsubscribes, as in libzmq).
//! [`MTrie`] answers "which pipes subscribed to a prefix of this message?" for PUB. Both walk
//! the message once, byte by byte, so matching cost depends on the topic length, not on the
//! number of subscriptions: thousands of topics cost no more than ten.

use std::collections::HashMap;

#[derive(Default)]
struct Node<V> {
    value: V,
    /// Sorted by byte for binary search.
    children: Vec<(u8, Node<V>)>,
}

impl<V: Default> Node<V> {
    fn child_mut(&mut self, b: u8) -> &mut Node<V> {
        let i = match self.children.binary_search_by_key(&b, |c| c.0) {
            Ok(i) => i,
            Err(i) => {
                self.children.insert(i, (b, Node::default()));
                i
            }
        };
        &mut self.children[i].1
    }

    fn child(&self, b: u8) -> Option<&Node<V>> {
        self.children.binary_search_by_key(&b, |c| c.0).ok().map(|i| &self.children[i].1)
    }
}

/// Prefix set with reference counts (SUB side).
#[derive(Default)]
pub(crate) struct Trie {
    root: Node<u32>,
    /// Every prefix with its count, to resend on reconnect.
    all: HashMap<Vec<u8>, u32>,
}

impl Trie {
    /// Adds a reference; returns true when the prefix is new.
    pub(crate) fn add(&mut self, prefix: &[u8]) -> bool {
        let mut n = &mut self.root;
        for &b in prefix {
            n = n.child_mut(b);
        }
        n.value += 1;
        *self.all.entry(prefix.to_vec()).or_insert(0) += 1;
        n.value == 1
    }

    /// Drops a reference; returns true when the last one went (false if it did not exist).
    pub(crate) fn remove(&mut self, prefix: &[u8]) -> bool {
        fn rm(n: &mut Node<u32>, p: &[u8]) -> Option<bool> {
            match p.split_first() {
                None => {
                    if n.value == 0 {
                        return None;
                    }
                    n.value -= 1;
                    Some(n.value == 0)
                }
                Some((&b, rest)) => {
                    let i = n.children.binary_search_by_key(&b, |c| c.0).ok()?;
                    let r = rm(&mut n.children[i].1, rest)?;
                    let c = &n.children[i].1;
                    if c.value == 0 && c.children.is_empty() {
                        n.children.remove(i); // prune so memory follows live subscriptions
                    }
                    Some(r)
                }
            }
        }
        let r = rm(&mut self.root, prefix).unwrap_or(false);
        if let Some(c) = self.all.get_mut(prefix) {
            *c -= 1;
            if *c == 0 {
                self.all.remove(prefix);
            }
        }
        r
    }

    /// True when some subscription is a prefix of `data`.
    #[inline]
    pub(crate) fn matches(&self, data: &[u8]) -> bool {
        let mut n = &self.root;
        if n.value > 0 {
            return true;
        }
        for &b in data {
            match n.child(b) {
                Some(c) => n = c,
                None => return false,
            }
            if n.value > 0 {
                return true;
            }
        }
        false
    }

    /// How many distinct prefixes are subscribed.
    pub(crate) fn len(&self) -> usize {
        self.all.len()
    }

    /// Every distinct prefix (for resending to a new or reconnected publisher).
    pub(crate) fn prefixes(&self) -> impl Iterator<Item = &[u8]> {
        self.all.keys().map(|k| k.as_slice())
    }
}

/// Prefix → subscribed pipes (PUB side). A pipe is in a prefix's set once, however often it
/// subscribed (libzmq's mtrie): SUB forwards duplicates, and one UNSUBSCRIBE, which SUB sends
/// only when its own count for the prefix ends, takes the pipe out.
#[derive(Default)]
pub(crate) struct MTrie {
    root: Node<Vec<(usize, u32)>>,
}

impl MTrie {
    /// Returns true when this is the first subscriber to the prefix.
    pub(crate) fn add(&mut self, prefix: &[u8], slot: usize) -> bool {
        let mut n = &mut self.root;
        for &b in prefix {
            n = n.child_mut(b);
        }
        let first = n.value.is_empty();
        if !n.value.iter().any(|(s, _)| *s == slot) {
            n.value.push((slot, 1));
        }
        first
    }

    /// Returns true when the pipe was subscribed and the prefix has no subscriber left.
    pub(crate) fn remove(&mut self, prefix: &[u8], slot: usize) -> bool {
        fn rm(n: &mut Node<Vec<(usize, u32)>>, p: &[u8], slot: usize) -> bool {
            match p.split_first() {
                None => match n.value.iter().position(|(s, _)| *s == slot) {
                    Some(i) => {
                        n.value.swap_remove(i);
                        n.value.is_empty()
                    }
                    None => false,
                },
                Some((&b, rest)) => {
                    let Ok(i) = n.children.binary_search_by_key(&b, |c| c.0) else { return false };
                    let r = rm(&mut n.children[i].1, rest, slot);
                    let c = &n.children[i].1;
                    if c.value.is_empty() && c.children.is_empty() {
                        n.children.remove(i);
                    }
                    r
                }
            }
        }
        rm(&mut self.root, prefix, slot)
    }

    /// The distinct pipes subscribed to anything, and the prefixes with a subscriber (a walk
    /// of the whole trie: for the metrics, not for the message path).
    pub(crate) fn counts(&self) -> (u64, u64) {
        fn walk(n: &Node<Vec<(usize, u32)>>, pipes: &mut Vec<usize>, prefixes: &mut u64) {
            if !n.value.is_empty() {
                *prefixes += 1;
                pipes.extend(n.value.iter().map(|(s, _)| *s));
            }
            for (_, c) in &n.children {
                walk(c, pipes, prefixes);
            }
        }
        let (mut pipes, mut prefixes) = (Vec::new(), 0);
        walk(&self.root, &mut pipes, &mut prefixes);
        pipes.sort_unstable();
        pipes.dedup();
        (pipes.len() as u64, prefixes)
    }

    /// Removes every subscription of a pipe, calling `gone` with each prefix the pipe was
    /// subscribed to: only those left with no subscriber when `uniq_only`, every one otherwise
    /// (libzmq's mtrie rm with call_on_uniq; XPUB reports them upstream as unsubscriptions).
    pub(crate) fn remove_pipe(&mut self, slot: usize, uniq_only: bool, mut gone: impl FnMut(&[u8])) {
        fn rm(n: &mut Node<Vec<(usize, u32)>>, slot: usize, uniq_only: bool, path: &mut Vec<u8>, gone: &mut dyn FnMut(&[u8])) {
            let had = n.value.len();
            n.value.retain(|(s, _)| *s != slot);
            if n.value.len() < had && (!uniq_only || n.value.is_empty()) {
                gone(path);
            }
            for (b, c) in n.children.iter_mut() {
                path.push(*b);
                rm(c, slot, uniq_only, path, gone);
                path.pop();
            }
            n.children.retain(|(_, c)| !(c.value.is_empty() && c.children.is_empty()));
        }
        rm(&mut self.root, slot, uniq_only, &mut Vec::new(), &mut gone);
    }

    /// Calls `f` for each pipe subscribed to a prefix of `data` (a pipe may be reported more
    /// than once if it subscribed to several matching prefixes; the caller de-duplicates).
    /// Returns how many matching prefixes had pipes: with at most one, no pipe was reported
    /// twice.
    #[inline]
    pub(crate) fn matches(&self, data: &[u8], mut f: impl FnMut(usize)) -> usize {
        let mut n = &self.root;
        let mut nodes = 0;
        let mut visit = |n: &Node<Vec<(usize, u32)>>, nodes: &mut usize| {
            if !n.value.is_empty() {
                *nodes += 1;
                for (s, _) in &n.value {
                    f(*s);
                }
            }
        };
        visit(n, &mut nodes);
        for &b in data {
            match n.child(b) {
                Some(c) => n = c,
                None => return nodes,
            }
            visit(n, &mut nodes);
        }
        nodes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trie_counts_and_prunes() {
        let mut t = Trie::default();
        assert!(!t.matches(b"abc"));
        assert!(t.add(b"ab"));
        assert!(!t.add(b"ab"));
        assert!(t.matches(b"abc"));
        assert!(!t.matches(b"a"));
        assert!(!t.remove(b"ab"));
        assert!(t.matches(b"abc"));
        assert!(t.remove(b"ab"));
        assert!(!t.matches(b"abc"));
        assert!(!t.remove(b"zz"), "removing an unknown prefix is a no-op");
        assert!(t.root.children.is_empty());
        assert!(t.add(b""));
        assert!(t.matches(b"anything"));
    }

    #[test]
    fn mtrie_reports_matching_pipes() {
        let mut t = MTrie::default();
        t.add(b"A", 1);
        t.add(b"AB", 2);
        t.add(b"", 3);
        t.add(b"B", 4);
        let mut got = vec![];
        t.matches(b"ABC", |s| got.push(s));
        got.sort();
        assert_eq!(got, vec![1, 2, 3]);
        let mut gone = vec![];
        t.remove_pipe(2, true, |p| gone.push(p.to_vec()));
        assert_eq!(gone, vec![b"AB".to_vec()], "AB lost its only subscriber");
        got.clear();
        t.matches(b"ABC", |s| got.push(s));
        got.sort();
        assert_eq!(got, vec![1, 3]);
        assert!(t.remove(b"A", 1));
    }

    #[test]
    fn mtrie_pipe_is_in_a_prefix_once() {
        // SUB forwards each SUBSCRIBE but only the UNSUBSCRIBE that ends its own count, so a
        // second SUBSCRIBE from the same pipe must not keep the pipe subscribed afterwards.
        let mut t = MTrie::default();
        assert!(t.add(b"A", 1), "first subscriber of A");
        assert!(!t.add(b"A", 1), "the same pipe again is not a new subscriber");
        assert!(t.remove(b"A", 1), "one unsubscribe takes the pipe out");
        let mut got = vec![];
        t.matches(b"AB", |s| got.push(s));
        assert!(got.is_empty());
        assert!(!t.remove(b"A", 1), "removing a pipe that is not subscribed reports nothing");
    }

    #[test]
    fn mtrie_remove_pipe_reports_every_prefix_unless_uniq_only() {
        let mut t = MTrie::default();
        t.add(b"A", 1);
        t.add(b"A", 2);
        t.add(b"B", 1);
        let mut gone = vec![];
        t.remove_pipe(1, true, |p| gone.push(p.to_vec()));
        assert_eq!(gone, vec![b"B".to_vec()], "A still has pipe 2");
        gone.clear();
        t.add(b"A", 1);
        t.remove_pipe(1, false, |p| gone.push(p.to_vec()));
        assert_eq!(gone, vec![b"A".to_vec()], "every prefix the pipe had, shared or not");
    }

    #[test]
    fn thousands_of_topics() {
        let mut t = MTrie::default();
        for i in 0..5000 {
            t.add(format!("topic.{i:05}").as_bytes(), i % 7);
        }
        let mut got = vec![];
        t.matches(b"topic.04999.payload", |s| got.push(s));
        assert_eq!(got, vec![4999 % 7]);
        got.clear();
        t.matches(b"topic.0499", |s| got.push(s));
        assert!(got.is_empty(), "a shorter message matches no longer topic");
    }
}
