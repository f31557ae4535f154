//! Authorization of kubelet API requests: `AlwaysAllow`, or upstream's webhook mode, which
//! asks the API server with a SubjectAccessReview whether the user may `verb` this node's
//! subresource, caching allowed answers for `cacheAuthorizedTTL` and denied ones for
//! `cacheUnauthorizedTTL`.

use std::time::Duration;

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::PostParams;
use kube::{Api, Client};

use super::attributes::Attributes;
use super::cache::TtlCache;
use super::identity::User;

/// Why a request is not let through.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The authorizer said no (answered 403).
    #[error("Forbidden (user={user}, verb={verb}, resource=nodes, subresource={subresource})")]
    Denied {
        /// The user.
        user: String,
        /// The verb asked.
        verb: &'static str,
        /// The subresource asked (the last one tried).
        subresource: &'static str,
    },
    /// No decision could be had (answered 500): no API server, or it did not answer.
    #[error("authorization failed: {0}")]
    Failed(String),
}

/// How requests are authorized.
pub enum Authorizer {
    /// Every authenticated request is allowed.
    AlwaysAllow,
    /// The API server decides.
    Webhook(Box<Webhook>),
}

/// The webhook authorizer's client, node and cache.
pub struct Webhook {
    client: Option<Client>,
    node: String,
    allowed_ttl: Duration,
    denied_ttl: Duration,
    cache: TtlCache<(User, Attributes), bool>,
}

impl Webhook {
    /// Asks through `client` (none in standalone mode: every request then fails to be
    /// authorized) about node `node`, caching answers for the given TTLs.
    #[must_use]
    pub fn new(
        client: Option<Client>,
        node: String,
        allowed_ttl: Duration,
        denied_ttl: Duration,
    ) -> Self {
        Self {
            client,
            node,
            allowed_ttl,
            denied_ttl,
            cache: TtlCache::new(),
        }
    }

    async fn allows(&self, user: &User, attributes: &Attributes) -> Result<bool, Refusal> {
        let key = (user.clone(), attributes.clone());
        if let Some(allowed) = self.cache.get(&key) {
            return Ok(allowed);
        }
        let client = self
            .client
            .clone()
            .ok_or_else(|| Refusal::Failed("no API server to ask (standalone mode)".to_owned()))?;
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(user.name.clone()),
                groups: Some(user.groups.clone()),
                uid: user.uid.clone(),
                resource_attributes: Some(ResourceAttributes {
                    verb: Some(attributes.verb.to_owned()),
                    resource: Some("nodes".to_owned()),
                    subresource: Some(attributes.subresource.to_owned()),
                    name: Some(self.node.clone()),
                    group: Some(String::new()),
                    ..ResourceAttributes::default()
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        let answer = Api::<SubjectAccessReview>::all(client)
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| Refusal::Failed(format!("SubjectAccessReview: {e}")))?;
        let allowed = answer.status.is_some_and(|s| s.allowed);
        let ttl = if allowed {
            self.allowed_ttl
        } else {
            self.denied_ttl
        };
        self.cache.put(key, allowed, ttl);
        Ok(allowed)
    }
}

impl Authorizer {
    /// Lets `user` through if any of `attributes` (tried in order) is allowed.
    ///
    /// # Errors
    /// [`Refusal::Denied`] when none is, [`Refusal::Failed`] when no answer could be had.
    pub async fn authorize(&self, user: &User, attributes: &[Attributes]) -> Result<(), Refusal> {
        let Self::Webhook(webhook) = self else {
            return Ok(());
        };
        for attribute in attributes {
            if webhook.allows(user, attribute).await? {
                return Ok(());
            }
        }
        let last = attributes.last();
        Err(Refusal::Denied {
            user: user.name.clone(),
            verb: last.map_or("get", |a| a.verb),
            subresource: last.map_or("proxy", |a| a.subresource),
        })
    }
}
