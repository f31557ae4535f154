//! Service account tokens for a pod's projected volumes, through the TokenRequest API
//! (`serviceaccounts/<name>/token`), bound to the pod so they die with it, and kept fresh: a
//! token is requested again once 80 % of its lifetime passed, or after 24 h.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

use k8s_openapi::api::authentication::v1::{BoundObjectReference, TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::PostParams;
use kube::{Api, Client};

use super::failure::api_failure;
use super::forbidden::retry_forbidden;
use sergeant_core::spec::{ApiRequest, ObjectError, TokenKey};

/// A token is renewed at the latest after this long, whatever its lifetime.
const MAX_TOKEN_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// The tokens one pod holds, by what they were asked for. Owned by the pod's actor and lent
/// to each sync.
#[derive(Debug, Clone, Default)]
pub struct TokenCache {
    tokens: BTreeMap<TokenKey, IssuedToken>,
}

#[derive(Debug, Clone)]
struct IssuedToken {
    token: String,
    issued: SystemTime,
    expires: SystemTime,
}

impl IssuedToken {
    /// Whether 80 % of its lifetime or 24 h passed at `now`.
    fn is_due(&self, now: SystemTime) -> bool {
        let lifetime = self.expires.duration_since(self.issued).unwrap_or_default();
        let age = now.duration_since(self.issued).unwrap_or_default();
        age >= lifetime.mul_f64(0.8) || age >= MAX_TOKEN_AGE
    }
}

/// The pod a token is bound to.
#[derive(Debug, Clone, Copy)]
pub struct TokenOwner<'a> {
    /// Its namespace, where the service account is.
    pub namespace: &'a str,
    /// Its name.
    pub name: &'a str,
    /// Its UID.
    pub uid: &'a str,
}

impl TokenCache {
    /// The token for `key`: the cached one while it is fresh, else a new one from the API
    /// server, bound to `owner`.
    ///
    /// # Errors
    ///
    /// [`ObjectError::Api`] naming the service account when the API server refuses or cannot
    /// be reached; [`ObjectError::NoTokenInAnswer`] when it answers without a token.
    pub async fn token(
        &mut self,
        client: &Client,
        owner: TokenOwner<'_>,
        key: &TokenKey,
    ) -> Result<String, ObjectError> {
        let now = SystemTime::now();
        if let Some(cached) = self.tokens.get(key).filter(|t| !t.is_due(now)) {
            return Ok(cached.token.clone());
        }
        let issued = request(client, owner, key).await?;
        let token = issued.token.clone();
        self.tokens.insert(key.clone(), issued);
        Ok(token)
    }

    /// Forgets the tokens no longer asked for.
    pub fn retain(&mut self, wanted: &BTreeSet<TokenKey>) {
        self.tokens.retain(|key, _| wanted.contains(key));
    }
}

async fn request(
    client: &Client,
    owner: TokenOwner<'_>,
    key: &TokenKey,
) -> Result<IssuedToken, ObjectError> {
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: if key.audience.is_empty() {
                Vec::new()
            } else {
                vec![key.audience.clone()]
            },
            bound_object_ref: Some(BoundObjectReference {
                api_version: Some("v1".to_owned()),
                kind: Some("Pod".to_owned()),
                name: Some(owner.name.to_owned()),
                uid: Some(owner.uid.to_owned()),
            }),
            expiration_seconds: Some(key.expiration_seconds),
        },
        ..TokenRequest::default()
    };
    let issued = SystemTime::now();
    let asked = ApiRequest::Token {
        namespace: owner.namespace.to_owned(),
        service_account: key.service_account.clone(),
    };
    let what = asked.to_string();
    let accounts = Api::<ServiceAccount>::namespaced(client.clone(), owner.namespace);
    let params = PostParams::default();
    let answer = retry_forbidden(&what, || {
        accounts.create_token_request(&key.service_account, &params, &request)
    })
    .await
    .map_err(|e| ObjectError::Api {
        failure: api_failure(&e),
        request: asked,
    })?;
    let status = answer.status.ok_or_else(|| ObjectError::NoTokenInAnswer {
        namespace: owner.namespace.to_owned(),
        service_account: key.service_account.clone(),
    })?;
    Ok(IssuedToken {
        token: status.token,
        issued,
        expires: SystemTime::from(status.expiration_timestamp.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_due_at_80_percent_or_after_a_day() {
        let issued = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let hour = IssuedToken {
            token: String::new(),
            issued,
            expires: issued + Duration::from_secs(3600),
        };
        assert!(!hour.is_due(issued + Duration::from_secs(2879)));
        assert!(hour.is_due(issued + Duration::from_secs(2880)));
        let week = IssuedToken {
            expires: issued + Duration::from_secs(7 * 24 * 3600),
            ..hour.clone()
        };
        assert!(!week.is_due(issued + Duration::from_secs(23 * 3600)));
        assert!(week.is_due(issued + MAX_TOKEN_AGE));
        let mut cache = TokenCache::default();
        let key = TokenKey {
            service_account: "default".into(),
            audience: String::new(),
            expiration_seconds: 3600,
        };
        cache.tokens.insert(key.clone(), hour);
        cache.retain(&BTreeSet::from([key.clone()]));
        assert_eq!(cache.tokens.len(), 1);
        cache.retain(&BTreeSet::new());
        assert!(cache.tokens.is_empty());
    }
}
