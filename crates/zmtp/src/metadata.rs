//! Connection metadata: the property list carried by READY (and, later,
//! INITIATE).
//!
//! Each property is a name (1-byte length, 1..=255 characters from
//! `ALPHA | DIGIT | - _ . +`) followed by a value (4-byte big-endian length,
//! at most 2^31-1, then opaque bytes). Names compare case-insensitively.
//! Properties keep their wire order; a lookup returns the first match.

use bytes::Bytes;

use crate::error::MetadataError;

/// The property that carries the sender's socket type.
pub const SOCKET_TYPE: &str = "Socket-Type";
/// The property that carries the sender's routing id.
pub const IDENTITY: &str = "Identity";

const MAX_VALUE_LEN: usize = i32::MAX as usize;

/// True if `name` is a valid property name.
pub fn is_valid_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'+'))
}

/// An ordered list of metadata properties.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metadata {
    props: Vec<(String, Bytes)>,
}

impl Metadata {
    /// An empty property list.
    pub fn new() -> Self {
        Metadata::default()
    }

    /// Appends a property. Names that are not valid property names are kept
    /// but left out by [`encode`](Self::encode); use
    /// [`try_insert`](Self::try_insert) to be told about them instead.
    pub fn insert(&mut self, name: &str, value: impl Into<Bytes>) {
        self.props.push((name.to_owned(), value.into()));
    }

    /// Appends a property if its name and value can be encoded.
    pub fn try_insert(&mut self, name: &str, value: impl Into<Bytes>) -> Result<(), MetadataError> {
        let value = value.into();
        if name.is_empty() {
            return Err(MetadataError::EmptyName { offset: self.encoded_len() });
        }
        if !is_valid_name(name.as_bytes()) {
            return Err(MetadataError::InvalidName { offset: self.encoded_len() });
        }
        if value.len() > MAX_VALUE_LEN {
            return Err(MetadataError::ValueTooLong {
                offset: self.encoded_len(),
                len: u32::try_from(value.len()).unwrap_or(u32::MAX),
            });
        }
        self.props.push((name.to_owned(), value));
        Ok(())
    }

    /// The value of the first property called `name`, ignoring case.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.get_bytes(name).map(|b| &b[..])
    }

    /// Like [`get`](Self::get), as a shared `Bytes` handle.
    pub fn get_bytes(&self, name: &str) -> Option<&Bytes> {
        self.props.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v)
    }

    /// Properties in wire order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.props.iter().map(|(n, v)| (n.as_str(), &v[..]))
    }

    /// Number of properties.
    pub fn len(&self) -> usize {
        self.props.len()
    }

    /// True if there are no properties.
    pub fn is_empty(&self) -> bool {
        self.props.is_empty()
    }

    /// Parses a property list, copying the values.
    pub fn parse(data: &[u8]) -> Result<Metadata, MetadataError> {
        Metadata::parse_bytes(&Bytes::copy_from_slice(data))
    }

    /// Parses a property list; values share `data`'s allocation. The whole
    /// input must be properties: leftover bytes are an error.
    pub fn parse_bytes(data: &Bytes) -> Result<Metadata, MetadataError> {
        let mut props = Vec::new();
        let mut pos = 0;
        while pos < data.len() {
            let offset = pos;
            let name_len = usize::from(data[pos]);
            pos += 1;
            if name_len == 0 {
                return Err(MetadataError::EmptyName { offset });
            }
            let name = data.get(pos..pos + name_len).ok_or(MetadataError::Truncated { offset })?;
            if !is_valid_name(name) {
                return Err(MetadataError::InvalidName { offset });
            }
            pos += name_len;
            let len_bytes = data.get(pos..pos + 4).ok_or(MetadataError::Truncated { offset })?;
            let mut be = [0u8; 4];
            be.copy_from_slice(len_bytes);
            let value_len = u32::from_be_bytes(be);
            pos += 4;
            if value_len as usize > MAX_VALUE_LEN {
                return Err(MetadataError::ValueTooLong { offset, len: value_len });
            }
            let end = pos
                .checked_add(value_len as usize)
                .filter(|&end| end <= data.len())
                .ok_or(MetadataError::Truncated { offset })?;
            // The name is ASCII (checked above), so this conversion is exact.
            let name = String::from_utf8_lossy(name).into_owned();
            props.push((name, data.slice(pos..end)));
            pos = end;
        }
        Ok(Metadata { props })
    }

    fn encodable(&self) -> impl Iterator<Item = &(String, Bytes)> {
        self.props.iter().filter(|(n, v)| is_valid_name(n.as_bytes()) && v.len() <= MAX_VALUE_LEN)
    }

    /// Length of [`encode`](Self::encode)'s output.
    pub fn encoded_len(&self) -> usize {
        self.encodable().map(|(n, v)| 1 + n.len() + 4 + v.len()).sum()
    }

    /// Appends the wire encoding. Properties with invalid names or values
    /// longer than 2^31-1 are skipped rather than emitted malformed.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        for (name, value) in self.encodable() {
            out.push(name.len() as u8);
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&(value.len() as u32).to_be_bytes());
            out.extend_from_slice(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dealer_abc() -> Vec<u8> {
        let mut v = vec![11];
        v.extend_from_slice(b"Socket-Type");
        v.extend_from_slice(&[0, 0, 0, 6]);
        v.extend_from_slice(b"DEALER");
        v.push(8);
        v.extend_from_slice(b"Identity");
        v.extend_from_slice(&[0, 0, 0, 3]);
        v.extend_from_slice(b"abc");
        v
    }

    #[test]
    fn round_trip() {
        let mut m = Metadata::new();
        m.insert("Socket-Type", &b"DEALER"[..]);
        m.insert("Identity", &b"abc"[..]);
        let mut out = Vec::new();
        m.encode(&mut out);
        assert_eq!(out, dealer_abc());
        assert_eq!(m.encoded_len(), out.len());
        let parsed = Metadata::parse(&out).unwrap();
        assert_eq!(parsed, m);
        assert_eq!(parsed.get("socket-type"), Some(&b"DEALER"[..]));
        assert_eq!(parsed.get("IDENTITY"), Some(&b"abc"[..]));
        assert_eq!(parsed.get("X-Missing"), None);
        assert_eq!(parsed.iter().count(), 2);
        assert_eq!(parsed.len(), 2);
        assert!(Metadata::parse(&[]).unwrap().is_empty());
    }

    #[test]
    fn empty_value_and_first_match_wins() {
        let mut m = Metadata::new();
        m.insert("A", Bytes::new());
        m.insert("a", &b"second"[..]);
        let mut out = Vec::new();
        m.encode(&mut out);
        let parsed = Metadata::parse(&out).unwrap();
        assert_eq!(parsed.get("A"), Some(&b""[..]));
    }

    #[test]
    fn errors() {
        assert_eq!(Metadata::parse(&[0]), Err(MetadataError::EmptyName { offset: 0 }));
        assert_eq!(Metadata::parse(&[3, b'a']), Err(MetadataError::Truncated { offset: 0 }));
        assert_eq!(Metadata::parse(&[2, b'a', b' ', 0, 0, 0, 0]), Err(MetadataError::InvalidName { offset: 0 }));
        assert_eq!(Metadata::parse(&[1, b'a', 0, 0]), Err(MetadataError::Truncated { offset: 0 }));
        assert_eq!(Metadata::parse(&[1, b'a', 0, 0, 0, 2, b'x']), Err(MetadataError::Truncated { offset: 0 }));
        assert_eq!(Metadata::parse(&[1, b'a', 0x80, 0, 0, 0]), Err(MetadataError::ValueTooLong { offset: 0, len: 0x8000_0000 }));
        // Trailing garbage after a valid property.
        let mut v = dealer_abc();
        v.push(5);
        assert_eq!(Metadata::parse(&v), Err(MetadataError::Truncated { offset: v.len() - 1 }));
    }

    #[test]
    fn invalid_names_are_not_encoded() {
        let mut m = Metadata::new();
        m.insert("bad name", &b"x"[..]);
        m.insert(&"n".repeat(256), &b"x"[..]);
        let mut out = Vec::new();
        m.encode(&mut out);
        assert!(out.is_empty());
        assert_eq!(m.encoded_len(), 0);
        assert_eq!(m.try_insert("", Bytes::new()), Err(MetadataError::EmptyName { offset: 0 }));
        assert_eq!(m.try_insert("é", Bytes::new()), Err(MetadataError::InvalidName { offset: 0 }));
        assert!(m.try_insert("X-Ok", Bytes::new()).is_ok());
    }
}
