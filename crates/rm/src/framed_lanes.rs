//! Shared framed connections on the RM (`weft_proto::shared_frames` states the wire): many AM
//! attempts' Allocates over one connection, each attempt on its own lane. Each lane is
//! checked when it opens as an own framed connection is (`allocate_stream::authenticate`) and
//! each request is answered as on it (`allocate_stream::answer`); a refusal ends its lane
//! only. Lanes are served concurrently: the connection's one task keeps every lane's call to
//! the driver in flight at once and writes the answers that are ready together in one write
//! (the driver answers a round's calls together).
//!
//! Why: a connection per AM attempt beside one per NM passes the open-file limit at a full
//! cluster's scale on one host (10,000 AMs and 12,000 NMs against 20,000 files), and the
//! gRPC stream the AMs fell back to cost the RM about five `writev`s per Allocate.
//!
//! Bounds (every byte is untrusted): at most [`MAX_LANES`] lanes per connection; one request
//! in flight per lane (a second is refused and ends the lane), so a connection never has more
//! than [`MAX_LANES`] calls in flight; frames as on an own connection (`MAX_MESSAGE` plus the
//! lane's number, an opening at most `MAX_OPEN`); a connection with no frame for the AM
//! expiry is closed; the port's bound on framed connections counts it once.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use futures_util::FutureExt;
use prost::Message;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;
use tonic::Status;
use weft_proto::frames::{
    put_empty, put_error, put_lane_empty, put_lane_error, put_lane_frame, split_lane, write_out,
    FrameError, FrameReader, FrameType, FramedOpen, LANE_LEN, MAX_MESSAGE, MAX_OPEN,
};
use weft_proto::v1::{AllocateRequest, AllocateResponse};
use weft_types::yarn_id::AttemptId;

use crate::am_service::AmService;
use crate::framed::allocate_credentials;

/// Lanes one shared connection may hold open at once (a gateway's AMs; `weft rm-bench` puts
/// 100 on each).
pub(crate) const MAX_LANES: usize = 4_096;

/// Where a lane is.
enum Lane {
    /// Its credentials are with the driver.
    Opening,
    /// Open for `attempt`; `busy` while a request is in flight.
    Open { attempt: AttemptId, busy: bool },
}

/// What came back from the driver for a lane. (Moved once, from its call's future to the
/// write: boxing the answer would add an allocation per Allocate for nothing.)
#[allow(clippy::large_enum_variant)]
enum Outcome {
    Opened(Result<AttemptId, Status>),
    Answered(Result<AllocateResponse, Status>),
}

type InFlight = Pin<Box<dyn Future<Output = (u32, Outcome)> + Send>>;

/// Serves a shared connection whose preamble and opening frame have arrived, until it closes,
/// goes idle for `idle`, breaks the framing, or the RM stops.
pub(crate) async fn serve(
    mut stream: TcpStream,
    mut reader: FrameReader,
    am: Arc<AmService>,
    idle: Duration,
    mut stop: watch::Receiver<bool>,
) {
    let mut out = Vec::with_capacity(1024);
    put_empty(&mut out, FrameType::Accepted);
    if write_out(&mut stream, &mut out).await.is_err() {
        return;
    }
    let mut lanes: HashMap<u32, Lane> = HashMap::new();
    let mut in_flight: FuturesUnordered<InFlight> = FuturesUnordered::new();
    let mut last_frame = Instant::now();
    let idle_timer = tokio::time::sleep(idle);
    tokio::pin!(idle_timer);
    let stopped = stop.wait_for(|stopped| *stopped);
    tokio::pin!(stopped);
    loop {
        // The select's branches only decide; awaiting happens after it (a branch that awaited
        // would hold the stop signal's guard across the await).
        let step = tokio::select! {
            biased;
            Some((lane, outcome)) = in_flight.next(), if !in_flight.is_empty() => {
                settle(&mut lanes, &mut out, lane, outcome);
                // Answers the driver gave in the same round go out in the same write.
                while let Some(Some((lane, outcome))) = in_flight.next().now_or_never() {
                    settle(&mut lanes, &mut out, lane, outcome);
                }
                Step::Go
            }
            frame = reader.next(&mut stream, MAX_MESSAGE + LANE_LEN) => match frame {
                Ok(Some((frame_type, payload))) => match split_lane(payload) {
                    Ok((lane, message)) => {
                        last_frame = Instant::now();
                        if let Some(call) = take(&am, &mut lanes, &mut out, frame_type, lane, message) {
                            in_flight.push(call);
                        }
                        Step::Go
                    }
                    Err(e) => Step::Refuse(e),
                },
                Ok(None) => Step::End,
                Err(e) => Step::Refuse(e),
            },
            () = &mut idle_timer => {
                if last_frame.elapsed() < idle {
                    idle_timer.as_mut().reset(last_frame + idle);
                    Step::Go
                } else if in_flight.is_empty() {
                    Step::End
                } else {
                    idle_timer.as_mut().reset(Instant::now() + idle);
                    Step::Go
                }
            }
            _ = &mut stopped => Step::End,
        };
        match step {
            Step::Go => {}
            Step::End => return,
            Step::Refuse(e) => return refuse(&mut stream, &mut out, &e).await,
        }
        if !out.is_empty() && write_out(&mut stream, &mut out).await.is_err() {
            return;
        }
    }
}

/// What one turn of a shared connection's loop leads to.
enum Step {
    Go,
    End,
    /// A frame the connection cannot take: it ends.
    Refuse(FrameError),
}

/// Takes one frame on `lane`: the call it starts, if any; refusals go into `out`.
fn take(
    am: &Arc<AmService>,
    lanes: &mut HashMap<u32, Lane>,
    out: &mut Vec<u8>,
    frame_type: FrameType,
    lane: u32,
    message: &[u8],
) -> Option<InFlight> {
    match frame_type {
        FrameType::Open => {
            let refusal = if lanes.contains_key(&lane) {
                Some(Status::invalid_argument(format!(
                    "lane {lane} is already open"
                )))
            } else if lanes.len() >= MAX_LANES {
                Some(Status::resource_exhausted(format!(
                    "a shared connection holds at most {MAX_LANES} lanes"
                )))
            } else if message.len() > MAX_OPEN {
                Some(Status::invalid_argument(format!(
                    "a lane's opening frame is {} bytes, above the limit of {MAX_OPEN}",
                    message.len()
                )))
            } else {
                None
            };
            if let Some(status) = refusal {
                put_lane_error(out, lane, &status);
                return None;
            }
            let credentials = FramedOpen::decode(message)
                .map_err(|e| Status::internal(format!("undecodable opening frame: {e}")))
                .and_then(|open| allocate_credentials(&open));
            let (attempt, token) = match credentials {
                Ok(credentials) => credentials,
                Err(status) => {
                    put_lane_error(out, lane, &status);
                    return None;
                }
            };
            lanes.insert(lane, Lane::Opening);
            let am = Arc::clone(am);
            Some(Box::pin(async move {
                let opened = crate::allocate_stream::authenticate(&am, attempt, token)
                    .await
                    .map(|()| attempt);
                (lane, Outcome::Opened(opened))
            }))
        }
        FrameType::Message => {
            let attempt = match lanes.get_mut(&lane) {
                Some(Lane::Open {
                    attempt,
                    busy: busy @ false,
                }) => {
                    *busy = true;
                    *attempt
                }
                Some(_) => {
                    lanes.remove(&lane);
                    let status = Status::invalid_argument(format!(
                        "lane {lane} sent a request before its last one was answered"
                    ));
                    put_lane_error(out, lane, &status);
                    return None;
                }
                None => {
                    let status = Status::invalid_argument(format!("lane {lane} is not open"));
                    put_lane_error(out, lane, &status);
                    return None;
                }
            };
            let request = match AllocateRequest::decode(message) {
                Ok(request) => request,
                Err(e) => {
                    lanes.remove(&lane);
                    let status = Status::internal(format!("failed to decode the request: {e}"));
                    put_lane_error(out, lane, &status);
                    return None;
                }
            };
            let am = Arc::clone(am);
            Some(Box::pin(async move {
                let answer = crate::allocate_stream::answer(&am, attempt, request).await;
                (lane, Outcome::Answered(answer))
            }))
        }
        // A call still in flight on a closed lane is answered to nobody (`settle`).
        FrameType::Close => {
            lanes.remove(&lane);
            None
        }
        FrameType::Accepted | FrameType::Error => {
            let status = Status::invalid_argument(format!(
                "a client does not send {frame_type:?} frames (lane {lane})"
            ));
            put_lane_error(out, lane, &status);
            lanes.remove(&lane);
            None
        }
    }
}

/// Writes what the driver answered for `lane` into `out`, unless the lane closed meanwhile.
fn settle(lanes: &mut HashMap<u32, Lane>, out: &mut Vec<u8>, lane: u32, outcome: Outcome) {
    let Some(state) = lanes.get_mut(&lane) else {
        return;
    };
    match outcome {
        Outcome::Opened(Ok(attempt)) => {
            *state = Lane::Open {
                attempt,
                busy: false,
            };
            put_lane_empty(out, FrameType::Accepted, lane);
        }
        Outcome::Answered(Ok(answer)) => {
            if let Lane::Open { busy, .. } = state {
                *busy = false;
            }
            if let Err(e) = put_lane_frame(out, FrameType::Message, lane, &answer) {
                lanes.remove(&lane);
                let status = Status::internal(format!("cannot frame the answer: {e}"));
                put_lane_error(out, lane, &status);
            }
        }
        Outcome::Opened(Err(status)) | Outcome::Answered(Err(status)) => {
            lanes.remove(&lane);
            put_lane_error(out, lane, &status);
        }
    }
}

/// Ends the connection after a frame it cannot take, telling the client why where the framing
/// still allows it.
async fn refuse(stream: &mut TcpStream, out: &mut Vec<u8>, e: &FrameError) {
    let status = match e {
        FrameError::TooLarge { len, max } => Status::out_of_range(format!(
            "Error, decoded message length too large: found {len} bytes, the limit is: {max} bytes"
        )),
        FrameError::Type(_) | FrameError::NoLane(_) => Status::invalid_argument(e.to_string()),
        // The connection broke: nobody to answer.
        _ => return,
    };
    put_error(out, &status);
    let _ = write_out(stream, out).await;
    let _ = tokio::io::AsyncWriteExt::shutdown(stream).await;
}
