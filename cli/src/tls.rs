//! TLS for `https://` sources (etcd members with `--etcd-ca`, `--etcd-cert`, `--etcd-key`):
//! one rustls client config (ring's cryptography), made once from the command line's files.
//! The server is checked against `--etcd-ca` (or, without it, the Mozilla roots of
//! `webpki-roots`), by the name or IP address in its URL.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore};

/// The TLS files named on the command line.
#[derive(Clone, Debug, Default)]
pub struct Files {
    /// PEM certificates of the authorities that sign the servers' certificates.
    pub ca: Option<PathBuf>,
    /// PEM certificate chain of this client (with `key`).
    pub cert: Option<PathBuf>,
    /// PEM private key of `cert`.
    pub key: Option<PathBuf>,
}

fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let read = CertificateDer::pem_file_iter(path).and_then(Iterator::collect::<Result<Vec<_>, _>>);
    match read {
        Ok(certificates) if !certificates.is_empty() => Ok(certificates),
        Ok(_) => Err(format!("{}: no PEM certificate in it", path.display())),
        Err(err) => Err(format!("{}: {err}", path.display())),
    }
}

/// The client config `files` describe.
///
/// # Errors
/// A file that cannot be read, holds no PEM certificate (or key), a certificate without
/// its key (or the reverse), or a key that does not fit its certificate.
pub fn config(files: &Files) -> Result<Arc<ClientConfig>, String> {
    let mut roots = RootCertStore::empty();
    match &files.ca {
        Some(ca) => {
            for certificate in certificates(ca)? {
                roots.add(certificate).map_err(|err| format!("{}: {err}", ca.display()))?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    // The process's provider: ring, the one rustls is built with here (Cargo.toml).
    let builder = ClientConfig::builder().with_root_certificates(roots);
    let config = match (&files.cert, &files.key) {
        (None, None) => builder.with_no_client_auth(),
        (Some(cert), Some(key)) => {
            let private = PrivateKeyDer::from_pem_file(key).map_err(|err| format!("{}: {err}", key.display()))?;
            builder
                .with_client_auth_cert(certificates(cert)?, private)
                .map_err(|err| format!("{}: {err}", cert.display()))?
        }
        _ => return Err("--etcd-cert and --etcd-key go together".into()),
    };
    Ok(Arc::new(config))
}
