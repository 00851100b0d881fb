//! A figure's data key and the hello that carries it: the only proof the
//! agent asks of a data connection or datagram, besides its address.
//! Apart because both ends and the control protocol use it (the key
//! travels in `Ready`), while nothing in it touches a socket.

/// Bytes of a figure's data key.
pub const KEY_BYTES: usize = 32;

/// What starts every data hello, before the key: as a little-endian
/// sequence number (the first 8 bytes of every stream and one-way message)
/// it is about 5.7 × 10¹⁸, which no figure reaches, so a repeated hello is
/// never taken for a message of the same length.
const HELLO_MAGIC: &[u8; 8] = b"IPCMHELO";

/// Bytes of a data hello: [`HELLO_MAGIC`], then the figure's key.
pub const HELLO_LEN: usize = HELLO_MAGIC.len() + KEY_BYTES;

/// A figure's data key: drawn by the agent for each figure and given to
/// its client in `Ready` over the control connection (authenticated when
/// the agent has a token). The client's data connection or first datagram
/// must carry it, from the control connection's address, before the agent
/// sends a byte on the data plane: a datagram with another source address
/// cannot turn the agent on a third party, and a stranger that cannot read
/// the control connection cannot take the figure's place.
#[derive(Clone, PartialEq, Eq)]
pub struct DataKey([u8; KEY_BYTES]);

impl std::fmt::Debug for DataKey {
    /// The key is a secret of the figure: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DataKey(…)")
    }
}

impl DataKey {
    /// A fresh key from the OS's CSPRNG.
    pub fn fresh() -> Result<DataKey, String> {
        let mut k = [0u8; KEY_BYTES];
        getrandom::fill(&mut k).map_err(|e| format!("no random numbers from the system: {e}"))?;
        Ok(DataKey(k))
    }

    /// The key as hex, for `Ready`.
    pub fn hex(&self) -> String {
        crate::remote::auth::hex(&self.0)
    }

    /// The key `Ready` carried; `None` unless it is hex of [`KEY_BYTES`] bytes.
    pub fn from_hex(s: &str) -> Option<DataKey> {
        let bytes = crate::remote::auth::unhex(s)?;
        Some(DataKey(bytes.try_into().ok()?))
    }

    /// The hello the client sends first on the data plane.
    pub fn hello(&self) -> [u8; HELLO_LEN] {
        let mut h = [0u8; HELLO_LEN];
        h[..HELLO_MAGIC.len()].copy_from_slice(HELLO_MAGIC);
        h[HELLO_MAGIC.len()..].copy_from_slice(&self.0);
        h
    }

    /// Whether `got` is this key's hello, compared in constant time (a
    /// stranger learns nothing from how fast a guess is dropped).
    pub fn is_hello(&self, got: &[u8]) -> bool {
        let want = self.hello();
        got.len() == want.len() && got.iter().zip(&want).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hello_carries_its_key_and_no_other_is_taken_for_it() {
        let key = DataKey::fresh().unwrap();
        let other = DataKey::fresh().unwrap();
        assert_ne!(key, other);
        assert_eq!(DataKey::from_hex(&key.hex()), Some(key.clone()));
        assert_eq!(DataKey::from_hex("abc"), None);
        assert_eq!(DataKey::from_hex(&"ab".repeat(KEY_BYTES + 1)), None);
        let hello = key.hello();
        assert!(key.is_hello(&hello));
        assert!(!other.is_hello(&hello));
        assert!(!key.is_hello(&hello[..HELLO_LEN - 1]));
        assert!(!key.is_hello(&[]));
        let mut longer = hello.to_vec();
        longer.push(0);
        assert!(!key.is_hello(&longer));
        // Never printed.
        assert!(!format!("{key:?}").contains(&key.hex()[..8]));
        // The magic, read as a message's sequence number, is none a figure reaches.
        assert!(u64::from_le_bytes(*HELLO_MAGIC) > 1 << 60);
    }
}
