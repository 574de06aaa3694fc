//! Hadoop's pseudo ("simple") web authentication: the caller is `?user.name=<u>`, and the
//! answer sets a `hadoop.auth` cookie naming that user, so later requests that carry only the
//! cookie (yarn-api-client's `SimpleAuth`, browsers) act as the same user. Without either the
//! caller is the static web user `dr.who`.

use std::collections::BTreeMap;
use std::convert::Infallible;

use axum::extract::{FromRequestParts, Query, Request};
use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Uri};
use axum::middleware::Next;
use axum::response::Response;

use super::Rest;

/// The user when a request names none, as Hadoop's static web user.
pub(crate) const ANONYMOUS: &str = "dr.who";

/// The cookie Hadoop's authentication filter sets.
const AUTH_COOKIE: &str = "hadoop.auth";

/// The caller of a request: `user.name`, else the `hadoop.auth` cookie's user, else `dr.who`.
pub(crate) struct Caller(pub(crate) String);

impl FromRequestParts<Rest> for Caller {
    type Rejection = Infallible;

    /// Names the caller and makes sure the core knows the caller's groups (the handlers check
    /// ACLs and `yarn.admin.acl` against them). A lookup that cannot reach the driver is not
    /// this request's failure: the handler's own call reports a stopped RM.
    async fn from_request_parts(parts: &mut Parts, rest: &Rest) -> Result<Caller, Infallible> {
        let user = caller_name(parts);
        let _ = rest.driver.ensure_groups(&user).await;
        Ok(Caller(user))
    }
}

fn caller_name(parts: &Parts) -> String {
    query_user(&parts.uri)
        .or_else(|| cookie_user(&parts.headers))
        .unwrap_or_else(|| ANONYMOUS.to_string())
}

/// A user name that fits in the cookie unquoted and unescaped (Hadoop's user names do).
fn plain(user: &str) -> bool {
    !user.is_empty()
        && user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-@$".contains(c))
}

fn query_user(uri: &Uri) -> Option<String> {
    let Query(q) = Query::<BTreeMap<String, String>>::try_from_uri(uri).ok()?;
    q.get("user.name").filter(|u| !u.is_empty()).cloned()
}

/// The `u=` field of a `hadoop.auth` cookie (`"u=alice&p=alice&t=simple"`, quoted or not).
fn cookie_user(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(|c| c.trim().strip_prefix(AUTH_COOKIE)?.strip_prefix('='))
        .map(|v| v.trim_matches('"'))
        .find_map(|v| {
            v.split('&')
                .find_map(|f| f.strip_prefix("u="))
                .filter(|u| plain(u))
                .map(str::to_string)
        })
}

/// Middleware: answers to a request with `user.name` set the `hadoop.auth` cookie. Pseudo
/// authentication takes the caller at their word, so the cookie carries no signature.
pub(crate) async fn set_cookie(req: Request, next: Next) -> Response {
    let user = query_user(req.uri()).filter(|u| plain(u));
    let mut resp = next.run(req).await;
    if let Some(u) = user {
        let cookie = format!("{AUTH_COOKIE}=\"u={u}&p={u}&t=simple\"; Path=/; HttpOnly");
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            resp.headers_mut().append(SET_COOKIE, v);
        }
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(uri: &str, cookie: Option<&str>) -> String {
        let mut req = axum::http::Request::builder().uri(uri);
        if let Some(c) = cookie {
            req = req.header(COOKIE, c);
        }
        let (parts, ()) = req.body(()).unwrap().into_parts();
        caller_name(&parts)
    }

    #[test]
    fn the_caller_comes_from_user_name_then_the_cookie() {
        assert_eq!(caller("/x", None), "dr.who");
        assert_eq!(caller("/x?user.name=alice", None), "alice");
        let cookie = "a=b; hadoop.auth=\"u=carol&p=carol&t=simple\"";
        assert_eq!(caller("/x", Some(cookie)), "carol");
        assert_eq!(caller("/x?user.name=bob", Some(cookie)), "bob");
        assert_eq!(caller("/x", Some("hadoop.auth=u=dave&t=simple")), "dave");
        // A cookie that smuggles separators names nobody.
        assert_eq!(
            caller("/x", Some("hadoop.auth=\"u=a b&t=simple\"")),
            "dr.who"
        );
    }
}
