//! The API client, from the kubeconfig file given with `--kubeconfig`.

use std::path::{Path, PathBuf};

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use super::transport::client_over_http2;
use crate::throttle::ApiRateLimit;

/// Why no client could be built from a kubeconfig.
#[derive(Debug, thiserror::Error)]
pub enum ApiClientError {
    /// The file could not be read or parsed.
    #[error("kubeconfig {path}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What was wrong with it.
        reason: String,
    },
    /// The file was read but describes no usable cluster or credentials.
    #[error("kubeconfig {path}: {reason}")]
    Unusable {
        /// The file.
        path: PathBuf,
        /// What is missing or invalid.
        reason: String,
    },
}

/// Builds the client of the cluster and user the kubeconfig at `path` selects (its current
/// context), over HTTP/2 (`transport`). Nothing is sent to the API server yet.
///
/// # Errors
/// [`ApiClientError`] naming the file and the reason.
pub async fn client_from_kubeconfig(
    path: &Path,
    limit: ApiRateLimit,
) -> Result<Client, ApiClientError> {
    let kubeconfig = Kubeconfig::read_from(path).map_err(|e| ApiClientError::Read {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    let unusable = |reason: String| ApiClientError::Unusable {
        path: path.to_owned(),
        reason,
    };
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| unusable(e.to_string()))?;
    client_over_http2(config, limit).map_err(|e| unusable(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_missing_or_broken_kubeconfig_is_named_in_the_error() {
        let Err(missing) = client_from_kubeconfig(
            Path::new("/nonexistent/kubeconfig"),
            ApiRateLimit::new(0, 0),
        )
        .await
        else {
            panic!("a client from a missing file");
        };
        assert!(
            missing
                .to_string()
                .starts_with("kubeconfig /nonexistent/kubeconfig: "),
            "{missing}"
        );
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "apiVersion: v1\nkind: Config\n").unwrap();
        let Err(error) = client_from_kubeconfig(&empty, ApiRateLimit::new(0, 0)).await else {
            panic!("a client from an empty kubeconfig");
        };
        assert!(matches!(error, ApiClientError::Unusable { .. }), "{error}");
    }
}
