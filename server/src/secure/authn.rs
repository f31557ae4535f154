//! Authentication of kubelet API requests, in upstream's order: a verified client certificate,
//! else a bearer token checked with the API server's TokenReview (answers cached for
//! `authentication.webhook.cacheTTL`), else — only when `authentication.anonymous.enabled` and
//! no credentials were presented — the anonymous user.

use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use kube::api::PostParams;
use kube::{Api, Client};

use super::cache::TtlCache;
use super::identity::User;

/// Why a request is not authenticated (answered 401).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unauthenticated {
    /// No certificate, no token, and anonymous access is off.
    #[error("no credentials, and anonymous access is disabled")]
    NoCredentials,
    /// A token was presented and not accepted.
    #[error("invalid bearer token: {0}")]
    InvalidToken(String),
    /// A token was presented but no API server can check it (standalone mode, webhook off,
    /// or the API server did not answer).
    #[error("bearer token cannot be checked: {0}")]
    Unverifiable(String),
}

/// Checks a request's credentials.
pub struct Authenticator {
    anonymous: bool,
    webhook: Option<(Client, Duration)>,
    /// Answers by the SHA-256 of the token: a client choosing tokens (up to a request head's
    /// size each) cannot make the cache hold more than 32 bytes of key per entry.
    cache: TtlCache<TokenDigest, Result<User, Unauthenticated>>,
}

/// The SHA-256 digest of a bearer token.
type TokenDigest = Box<[u8]>;

/// `token`'s digest, the key of its cached answer.
fn digest(token: &str) -> TokenDigest {
    ring::digest::digest(&ring::digest::SHA256, token.as_bytes())
        .as_ref()
        .into()
}

impl Authenticator {
    /// An authenticator allowing anonymous requests if `anonymous`, and checking tokens with
    /// `webhook` (the API client and the cache TTL) when given.
    #[must_use]
    pub fn new(anonymous: bool, webhook: Option<(Client, Duration)>) -> Self {
        Self {
            anonymous,
            webhook,
            cache: TtlCache::new(),
        }
    }

    /// The user behind a request that presented `certificate_user` (from a client certificate
    /// the TLS layer verified) and `bearer` (the token of an `Authorization: Bearer` header).
    ///
    /// # Errors
    /// [`Unauthenticated`] when nobody can be established.
    pub async fn authenticate(
        &self,
        certificate_user: Option<&User>,
        bearer: Option<&str>,
    ) -> Result<User, Unauthenticated> {
        if let Some(user) = certificate_user {
            return Ok(user.clone());
        }
        let Some(token) = bearer else {
            return if self.anonymous {
                Ok(User::anonymous())
            } else {
                Err(Unauthenticated::NoCredentials)
            };
        };
        let Some((client, ttl)) = &self.webhook else {
            return Err(Unauthenticated::Unverifiable(
                "token authentication is off (no API server, or authentication.webhook.enabled is false)"
                    .to_owned(),
            ));
        };
        let key = digest(token);
        if let Some(answer) = self.cache.get(&key) {
            return answer;
        }
        let answer = review(client, token).await;
        if !matches!(answer, Err(Unauthenticated::Unverifiable(_))) {
            self.cache.put(key, answer.clone(), *ttl);
        }
        answer
    }
}

async fn review(client: &Client, token: &str) -> Result<User, Unauthenticated> {
    let review = TokenReview {
        spec: TokenReviewSpec {
            token: Some(token.to_owned()),
            audiences: None,
        },
        ..TokenReview::default()
    };
    let answer = Api::<TokenReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
        .map_err(|e| Unauthenticated::Unverifiable(format!("TokenReview: {e}")))?;
    let status = answer.status.unwrap_or_default();
    if status.authenticated != Some(true) {
        return Err(Unauthenticated::InvalidToken(
            status
                .error
                .filter(|e| !e.is_empty())
                .unwrap_or_else(|| "not authenticated".to_owned()),
        ));
    }
    let user = status.user.unwrap_or_default();
    Ok(User {
        name: user.username.unwrap_or_default(),
        groups: user.groups.unwrap_or_default(),
        uid: user.uid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_cached_by_a_digest_of_fixed_size() {
        let huge = "t".repeat(64 * 1024);
        assert_eq!(digest(&huge).len(), 32);
        assert_eq!(digest("a"), digest("a"));
        assert_ne!(digest("a"), digest("b"));
    }
}
