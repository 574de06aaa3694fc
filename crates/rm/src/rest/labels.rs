//! Hadoop's node-label endpoints (RMWebServices, paths from `RMWSConsts`) over the RM's
//! node-label registry: resource pools are exclusive partitions (resource-pools spec §11).
//!
//! Shapes follow Hadoop's DAOs (`NodeLabelsInfo`, `NodeToLabelsInfo`, `LabelsToNodesInfo`)
//! in the natural JSON dialect the rest of this API speaks, root wrapped. Not checked against
//! a captured Hadoop 3.3 answer: whether its Jersey writes these DAOs in the mapped dialect
//! (booleans as strings, maps as `entry` lists) instead. So maps are written as objects keyed
//! by node id or label name, and inputs accept both dialects: a wrapped or bare root, a list
//! or a single object, and booleans as booleans or strings.

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::Json;
use serde_json::{json, Map, Value};
use weft_rm_core::NodeLabelInfo;

use super::auth::Caller;
use super::{body_json, Rest, RestError};

type ListParams = Query<Vec<(String, String)>>;

fn label_json(l: &NodeLabelInfo) -> Value {
    json!({"name": l.name, "exclusivity": l.exclusive})
}

fn labels_info(labels: &[NodeLabelInfo]) -> Value {
    json!({"nodeLabelInfo": labels.iter().map(label_json).collect::<Vec<_>>()})
}

/// Every value of query parameter `name` (repeatable, each also split at commas), trimmed,
/// empty ones dropped.
fn list_param(q: &[(String, String)], name: &str) -> Vec<String> {
    q.iter()
        .filter(|(k, _)| k == name)
        .flat_map(|(_, v)| v.split(','))
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect()
}

/// Refuses a caller outside `yarn.admin.acl` (401, as Hadoop's AuthorizationException).
async fn require_admin(s: &Rest, who: &str, action: &str) -> Result<(), RestError> {
    let user = who.to_string();
    if s.driver.call(move |core, _| core.is_admin(&user)).await? {
        Ok(())
    } else {
        Err(RestError::unauthorized(format!(
            "User {who} not authorized for action {action}"
        )))
    }
}

/// `GET /get-node-labels`: every cluster node label (the file's pools and the admin labels).
pub(crate) async fn get_node_labels(State(s): State<Rest>) -> Result<Json<Value>, RestError> {
    let labels = s.driver.call(|core, _| core.node_labels()).await?;
    Ok(Json(json!({"nodeLabelsInfo": labels_info(&labels)})))
}

/// A `true`/`false` given as a boolean or a string.
fn flag(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

/// The labels of an add-node-labels body: `NodeLabelsInfo`, wrapped or not.
fn parse_label_infos(v: &Value) -> Result<Vec<(String, bool)>, RestError> {
    let root = v.get("nodeLabelsInfo").unwrap_or(v);
    let infos = match root.get("nodeLabelInfo") {
        Some(Value::Array(a)) => a.clone(),
        Some(one @ Value::Object(_)) => vec![one.clone()],
        _ => {
            return Err(RestError::bad_request(
                "the body must be NodeLabelsInfo: {\"nodeLabelInfo\": [{\"name\": \"gpu\", \"exclusivity\": true}]}",
            ))
        }
    };
    infos
        .iter()
        .enumerate()
        .map(|(i, info)| {
            let name = info
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    RestError::bad_request(format!("nodeLabelInfo[{i}] has no string name"))
                })?
                .trim()
                .to_string();
            let exclusive = match info.get("exclusivity") {
                None | Some(Value::Null) => true,
                Some(v) => flag(v).ok_or_else(|| {
                    RestError::bad_request(format!(
                        "nodeLabelInfo[{i}] ({name}): exclusivity must be true or false, found {v}"
                    ))
                })?,
            };
            Ok((name, exclusive))
        })
        .collect()
}

/// `POST /add-node-labels` (admins): body NodeLabelsInfo.
pub(crate) async fn add_node_labels(
    State(s): State<Rest>,
    Caller(who): Caller,
    body: Bytes,
) -> Result<Json<Value>, RestError> {
    require_admin(&s, &who, "addToClusterNodeLabels").await?;
    let labels = parse_label_infos(&body_json(&body)?)?;
    s.driver
        .call(move |core, _| core.add_node_labels(&labels))
        .await??;
    Ok(Json(json!({})))
}

/// `POST /remove-node-labels?labels=a&labels=b` (admins).
pub(crate) async fn remove_node_labels(
    State(s): State<Rest>,
    Caller(who): Caller,
    Query(q): ListParams,
) -> Result<Json<Value>, RestError> {
    require_admin(&s, &who, "removeFromClusterNodeLabels").await?;
    let names = list_param(&q, "labels");
    if names.is_empty() {
        return Err(RestError::bad_request(
            "give the labels to remove as query parameters: ?labels=a&labels=b",
        ));
    }
    s.driver
        .call(move |core, _| core.remove_node_labels(&names))
        .await??;
    Ok(Json(json!({})))
}

/// `GET /get-node-to-labels`: each labelled node and its label.
pub(crate) async fn get_node_to_labels(State(s): State<Rest>) -> Result<Json<Value>, RestError> {
    let (nodes, labels) = s
        .driver
        .call(|core, _| (core.node_infos(), core.node_labels()))
        .await?;
    let mut map = Map::new();
    for n in &nodes {
        if let Some(l) = labels
            .iter()
            .find(|l| n.label.as_deref() == Some(l.name.as_str()))
        {
            map.insert(n.node_id.clone(), labels_info(std::slice::from_ref(l)));
        }
    }
    Ok(Json(json!({"nodeToLabelsInfo": {"nodeToLabels": map}})))
}

/// `GET /label-mappings[?labels=a]`: each label's nodes (every label when none is named).
pub(crate) async fn label_mappings(
    State(s): State<Rest>,
    Query(q): ListParams,
) -> Result<Json<Value>, RestError> {
    let wanted = list_param(&q, "labels");
    let (nodes, labels) = s
        .driver
        .call(|core, _| (core.node_infos(), core.node_labels()))
        .await?;
    let mut map = Map::new();
    for l in &labels {
        if !wanted.is_empty() && !wanted.contains(&l.name) {
            continue;
        }
        let ids: Vec<&str> = nodes
            .iter()
            .filter(|n| n.label.as_deref() == Some(l.name.as_str()))
            .map(|n| n.node_id.as_str())
            .collect();
        map.insert(l.name.clone(), json!({"nodes": ids}));
    }
    Ok(Json(json!({"labelsToNodesInfo": {"labelsToNodes": map}})))
}

/// `GET /nodes/{id}/get-labels`.
pub(crate) async fn get_labels_on_node(
    State(s): State<Rest>,
    Path(id): Path<String>,
) -> Result<Json<Value>, RestError> {
    let node = id.clone();
    let found = s
        .driver
        .call(move |core, _| {
            let known = core.node_infos().iter().any(|n| n.node_id == node);
            known.then(|| {
                let label = core.node_label(&node);
                core.node_labels()
                    .into_iter()
                    .filter(|l| label.as_deref() == Some(l.name.as_str()))
                    .collect::<Vec<_>>()
            })
        })
        .await?;
    let labels =
        found.ok_or_else(|| RestError::not_found(format!("nodeId, {id}, is not found")))?;
    Ok(Json(json!({"nodeLabelsInfo": labels_info(&labels)})))
}

/// `POST /nodes/{id}/replace-labels?labels=x` (admins; no label clears the node's).
pub(crate) async fn replace_labels_on_node(
    State(s): State<Rest>,
    Path(id): Path<String>,
    Caller(who): Caller,
    Query(q): ListParams,
) -> Result<Json<Value>, RestError> {
    require_admin(&s, &who, "replaceLabelsOnNode").await?;
    let mapping = vec![(id, list_param(&q, "labels"))];
    s.driver
        .call(move |core, now| core.replace_node_labels(now, &mapping))
        .await??;
    Ok(Json(json!({})))
}

/// `POST /replace-node-to-labels` (admins): body NodeToLabelsEntryList,
/// `{"nodeToLabels": [{"nodeId": "h1:8041", "labels": ["x"]}]}`, applied as a whole or not at
/// all.
pub(crate) async fn replace_node_to_labels(
    State(s): State<Rest>,
    Caller(who): Caller,
    body: Bytes,
) -> Result<Json<Value>, RestError> {
    require_admin(&s, &who, "replaceLabelsOnNodes").await?;
    let v = body_json(&body)?;
    let root = v.get("nodeToLabelsEntryList").unwrap_or(&v);
    let entries = match root.get("nodeToLabels") {
        Some(Value::Array(a)) => a.clone(),
        Some(one @ Value::Object(_)) => vec![one.clone()],
        _ => {
            return Err(RestError::bad_request(
                "the body must be {\"nodeToLabels\": [{\"nodeId\": \"host:port\", \"labels\": [\"x\"]}]}",
            ))
        }
    };
    let mut mapping = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let node = e
            .get("nodeId")
            .and_then(Value::as_str)
            .ok_or_else(|| RestError::bad_request(format!("nodeToLabels[{i}] has no nodeId")))?;
        let labels = match e.get("labels") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(l)) => vec![l.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .map(|l| {
                    l.as_str().map(str::to_string).ok_or_else(|| {
                        RestError::bad_request(format!("nodeToLabels[{i}]: labels must be strings"))
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(RestError::bad_request(format!(
                    "nodeToLabels[{i}]: labels must be a list of strings, found {other}"
                )))
            }
        };
        mapping.push((node.to_string(), labels));
    }
    s.driver
        .call(move |core, now| core.replace_node_labels(now, &mapping))
        .await??;
    Ok(Json(json!({})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_bodies_are_read_in_both_dialects() {
        let natural = json!({"nodeLabelInfo": [{"name": "gpu", "exclusivity": true},
                                               {"name": "ssd", "exclusivity": false}]});
        let mapped =
            json!({"nodeLabelsInfo": {"nodeLabelInfo": {"name": "gpu", "exclusivity": "true"}}});
        let bare = json!({"nodeLabelInfo": [{"name": " x "}]});
        assert_eq!(
            parse_label_infos(&natural).unwrap(),
            [("gpu".to_string(), true), ("ssd".to_string(), false)]
        );
        assert_eq!(
            parse_label_infos(&mapped).unwrap(),
            [("gpu".to_string(), true)]
        );
        assert_eq!(parse_label_infos(&bare).unwrap(), [("x".to_string(), true)]);
        let bad =
            parse_label_infos(&json!({"nodeLabelInfo": [{"name": "a", "exclusivity": "yes"}]}))
                .unwrap_err();
        assert!(
            bad.message.contains("exclusivity must be true or false"),
            "{}",
            bad.message
        );
        assert!(parse_label_infos(&json!({"labels": []})).is_err());
    }

    #[test]
    fn list_parameters_repeat_and_split_at_commas() {
        let q = vec![
            ("labels".to_string(), "a,b".to_string()),
            ("other".to_string(), "z".to_string()),
            ("labels".to_string(), " c ".to_string()),
            ("labels".to_string(), String::new()),
        ];
        assert_eq!(list_param(&q, "labels"), ["a", "b", "c"]);
    }
}
