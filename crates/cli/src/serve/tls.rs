//! The server's TLS identity, made fresh at every start: a CA of its own and a certificate for
//! `127.0.0.1`/`localhost` signed by it. client-go sends bearer tokens only over `https://`, so
//! plain HTTP would leave every request anonymous; the CA goes into the kubeconfig
//! (`certificate-authority-data`), so kubectl verifies the server without skipping checks.

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::ServerConfig;

/// What `serve` needs: the acceptor's configuration and the CA in PEM for the kubeconfig.
pub struct Identity {
    pub config: Arc<ServerConfig>,
    pub ca_pem: String,
}

pub fn identity(host: &str) -> Result<Identity, String> {
    let err = |e: rcgen::Error| format!("cannot make the server's certificate: {e}");
    let ca_key = KeyPair::generate().map_err(err)?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "converge serve CA");
    let ca_cert = ca.self_signed(&ca_key).map_err(err)?;
    let mut names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    if !names.iter().any(|n| n == host) {
        names.push(host.to_owned());
    }
    let leaf_key = KeyPair::generate().map_err(err)?;
    let mut leaf = CertificateParams::new(names).map_err(err)?;
    leaf.distinguished_name
        .push(DnType::CommonName, "converge serve");
    let leaf_cert = leaf.signed_by(&leaf_key, &ca_cert, &ca_key).map_err(err)?;
    let chain: Vec<CertificateDer<'static>> = vec![leaf_cert.der().clone(), ca_cert.der().clone()];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot configure TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("cannot configure TLS: {e}"))?;
    Ok(Identity {
        config: Arc::new(config),
        ca_pem: ca_cert.pem(),
    })
}
