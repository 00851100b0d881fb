//! The shared secret of an agent and its clients: the token file, the nonces
//! and the HMAC-SHA256 challenge–response in both directions. The token
//! itself never goes on the wire; each side proves it holds it by a MAC of
//! both sides' fresh nonces, so a recorded exchange cannot be replayed.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Bytes of a nonce (drawn from the OS's CSPRNG).
pub const NONCE_BYTES: usize = 32;

/// What each MAC covers, so that the client's proof can never be replayed
/// as the agent's (or a later version's as this one's).
const LABEL: &str = "ipcmark-auth-v1";

/// Which side computes a MAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The client proves it holds the token.
    Client,
    /// The agent proves it holds the token.
    Agent,
}

/// Reads a token file (`--token-file`, for `serve` and `run --remote`): the
/// file's bytes, without trailing white space (so `echo secret > FILE`
/// gives the same token on both hosts). Refused when group or others may
/// read it, or when it is empty.
pub fn read_token_file(path: &Path) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("token file {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("token file {shown} is not a regular file"));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "token file {shown} may be read by group or others (mode {mode:03o}): \
             make it private with chmod 600 {shown}"
        ));
    }
    let mut token = std::fs::read(path).map_err(|e| format!("token file {shown}: {e}"))?;
    while token.last().is_some_and(|b| b.is_ascii_whitespace()) {
        token.pop();
    }
    if token.is_empty() {
        return Err(format!("token file {shown} is empty"));
    }
    Ok(token)
}

/// A fresh nonce from the OS's CSPRNG, as hex.
pub fn nonce() -> Result<String, String> {
    let mut bytes = [0u8; NONCE_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random numbers from the system: {e}"))?;
    Ok(hex(&bytes))
}

/// The MAC `side` sends: HMAC-SHA256(token, label|side|own nonce|other's
/// nonce) where the client's "own" is the server nonce first (the
/// challenge it answers), as hex.
pub fn mac(token: &[u8], side: Side, server_nonce: &str, client_nonce: &str) -> String {
    hex(&mac_of(token, side, server_nonce, client_nonce)
        .finalize()
        .into_bytes())
}

/// Whether `mac_hex` is the MAC `side` must send (compared in constant time).
pub fn verify(
    token: &[u8],
    side: Side,
    server_nonce: &str,
    client_nonce: &str,
    mac_hex: &str,
) -> bool {
    let Some(given) = unhex(mac_hex) else {
        return false;
    };
    mac_of(token, side, server_nonce, client_nonce)
        .verify_slice(&given)
        .is_ok()
}

fn mac_of(token: &[u8], side: Side, server_nonce: &str, client_nonce: &str) -> Hmac<Sha256> {
    // HMAC takes a key of any length: this cannot fail.
    let mut m =
        <Hmac<Sha256> as KeyInit>::new_from_slice(token).expect("HMAC takes any key length");
    let message = match side {
        Side::Client => format!("{LABEL}|client|{server_nonce}|{client_nonce}"),
        Side::Agent => format!("{LABEL}|agent|{client_nonce}|{server_nonce}"),
    };
    m.update(message.as_bytes());
    m
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// The bytes of a hex string; `None` if it is not one.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

/// Whether `s` is a well-formed nonce (hex of [`NONCE_BYTES`] bytes).
pub fn is_nonce(s: &str) -> bool {
    s.len() == 2 * NONCE_BYTES && unhex(s).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_side_verifies_only_the_other_sides_mac_made_with_the_same_token() {
        let (s, c) = (nonce().unwrap(), nonce().unwrap());
        assert_ne!(s, c);
        assert!(is_nonce(&s));
        let client = mac(b"secret", Side::Client, &s, &c);
        assert!(verify(b"secret", Side::Client, &s, &c, &client));
        assert!(!verify(b"other", Side::Client, &s, &c, &client));
        assert!(!verify(b"secret", Side::Agent, &s, &c, &client));
        assert!(!verify(b"secret", Side::Client, &c, &s, &client));
        let agent = mac(b"secret", Side::Agent, &s, &c);
        assert!(verify(b"secret", Side::Agent, &s, &c, &agent));
        assert!(!verify(b"secret", Side::Agent, &s, &c, "zz"));
        assert!(!verify(b"secret", Side::Agent, &s, &c, "é"));
        assert!(!verify(b"secret", Side::Agent, &s, &c, &agent[..10]));
    }

    #[test]
    fn hex_round_trips() {
        let b: Vec<u8> = (0..=255).collect();
        assert_eq!(unhex(&hex(&b)).unwrap(), b);
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("0g"), None);
    }

    #[test]
    fn a_token_file_must_be_private_and_not_empty() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t");
        std::fs::write(&p, "s3cret\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = read_token_file(&p).unwrap_err();
        assert!(e.contains("mode 644") && e.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_token_file(&p).unwrap(), b"s3cret");
        std::fs::write(&p, " \n").unwrap();
        assert!(read_token_file(&p).unwrap_err().contains("empty"));
        assert!(read_token_file(&dir.path().join("none")).is_err());
    }
}
