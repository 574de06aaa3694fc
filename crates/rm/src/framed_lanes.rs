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
//! in flight per lane (a second is refused and ends the lane); a lane opens only while the
//! connection has fewer than [`MAX_LANES`] calls in flight (a lane closed with a call in
//! flight leaves it to finish unanswered), so never more than twice that; frames as on an own connection (`MAX_MESSAGE` plus the
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
    put_empty, put_lane_empty, put_lane_error, put_lane_frame, split_lane, write_out, FrameError,
    FrameReader, FrameType, FramedOpen, LANE_LEN, MAX_MESSAGE, MAX_OPEN,
};
use weft_proto::v1::{AllocateRequest, AllocateResponse};
use weft_types::yarn_id::AttemptId;

use crate::am_service::AmService;
use crate::framed::allocate_credentials;

/// Lanes one shared connection may hold open at once (a gateway's AMs; `weft rm-bench` puts
/// 100 on each).
pub(crate) const MAX_LANES: usize = 4_096;

/// A lane the client has opened.
struct Lane {
    /// Which opening of the lane's number this is: a call still in flight for an earlier one
    /// (closed, then opened again) is answered to nobody.
    generation: u64,
    /// The attempt it speaks for, once the driver has checked the credentials.
    attempt: Option<AttemptId>,
    /// A call of the lane is with the driver.
    busy: bool,
}

/// What came back from the driver for a lane. (Moved once, from its call's future to the
/// write: boxing the answer would add an allocation per Allocate for nothing.)
#[allow(clippy::large_enum_variant)]
enum Outcome {
    Opened(Result<AttemptId, Status>),
    Answered(Result<AllocateResponse, Status>),
}

type InFlight = Pin<Box<dyn Future<Output = (u32, u64, Outcome)> + Send>>;

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
    let mut lanes = Lanes::default();
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
            Some((lane, generation, outcome)) = in_flight.next(), if !in_flight.is_empty() => {
                lanes.settle(&mut out, lane, generation, outcome);
                // Answers the driver gave in the same round go out in the same write.
                while let Some(Some((lane, generation, outcome))) = in_flight.next().now_or_never() {
                    lanes.settle(&mut out, lane, generation, outcome);
                }
                Step::Go
            }
            frame = reader.next(&mut stream, MAX_MESSAGE + LANE_LEN) => match frame {
                Ok(Some((frame_type, payload))) => match split_lane(payload) {
                    Ok((lane, message)) => {
                        last_frame = Instant::now();
                        let busy = in_flight.len();
                        if let Some(call) = lanes.take(&am, &mut out, busy, frame_type, lane, message) {
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
            Step::Refuse(e) => return refuse(&mut stream, &e).await,
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

/// A connection's open lanes by number.
#[derive(Default)]
struct Lanes {
    open: HashMap<u32, Lane>,
    /// Openings so far (each lane's `generation`).
    openings: u64,
}

impl Lanes {
    /// Takes one frame on `lane`: the call it starts, if any; refusals go into `out`.
    /// `in_flight` is how many calls the connection has with the driver.
    fn take(
        &mut self,
        am: &Arc<AmService>,
        out: &mut Vec<u8>,
        in_flight: usize,
        frame_type: FrameType,
        lane: u32,
        message: &[u8],
    ) -> Option<InFlight> {
        match frame_type {
            FrameType::Open => self.open(am, out, in_flight, lane, message),
            FrameType::Message => self.request(am, out, lane, message),
            // A call still in flight on a closed lane is answered to nobody (`settle`).
            FrameType::Close => {
                self.open.remove(&lane);
                None
            }
            FrameType::Accepted | FrameType::Error => {
                self.refuse(
                    out,
                    lane,
                    &Status::invalid_argument(format!(
                        "a client does not send {frame_type:?} frames (lane {lane})"
                    )),
                );
                None
            }
        }
    }

    fn open(
        &mut self,
        am: &Arc<AmService>,
        out: &mut Vec<u8>,
        in_flight: usize,
        lane: u32,
        message: &[u8],
    ) -> Option<InFlight> {
        let refusal = if self.open.contains_key(&lane) {
            Some(Status::invalid_argument(format!(
                "lane {lane} is already open"
            )))
        } else if self.open.len() >= MAX_LANES || in_flight >= MAX_LANES {
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
        let credentials = match refusal {
            Some(status) => Err(status),
            None => FramedOpen::decode(message)
                .map_err(|e| Status::internal(format!("undecodable opening frame: {e}")))
                .and_then(|open| allocate_credentials(&open)),
        };
        let (attempt, token) = match credentials {
            Ok(credentials) => credentials,
            Err(status) => {
                self.refuse(out, lane, &status);
                return None;
            }
        };
        self.openings += 1;
        let generation = self.openings;
        self.open.insert(
            lane,
            Lane {
                generation,
                attempt: None,
                busy: true,
            },
        );
        let am = Arc::clone(am);
        Some(Box::pin(async move {
            let opened = crate::allocate_stream::authenticate(&am, attempt, token)
                .await
                .map(|()| attempt);
            (lane, generation, Outcome::Opened(opened))
        }))
    }

    fn request(
        &mut self,
        am: &Arc<AmService>,
        out: &mut Vec<u8>,
        lane: u32,
        message: &[u8],
    ) -> Option<InFlight> {
        let refusal = match self.open.get_mut(&lane) {
            None => Status::invalid_argument(format!("lane {lane} is not open")),
            Some(Lane {
                busy: true,
                attempt: None,
                ..
            }) => {
                Status::invalid_argument(format!("lane {lane} sent a request before it was open"))
            }
            Some(Lane { busy: true, .. }) => Status::invalid_argument(format!(
                "lane {lane} sent a request before its last one was answered"
            )),
            Some(state) => match (state.attempt, AllocateRequest::decode(message)) {
                (Some(attempt), Ok(request)) => {
                    state.busy = true;
                    let generation = state.generation;
                    let am = Arc::clone(am);
                    return Some(Box::pin(async move {
                        let answer = crate::allocate_stream::answer(&am, attempt, request).await;
                        (lane, generation, Outcome::Answered(answer))
                    }));
                }
                (_, Err(e)) => Status::internal(format!("failed to decode the request: {e}")),
                (None, Ok(_)) => Status::internal(format!("lane {lane} names no attempt")),
            },
        };
        self.refuse(out, lane, &refusal);
        None
    }

    /// Refuses on `lane`, which ends it.
    fn refuse(&mut self, out: &mut Vec<u8>, lane: u32, status: &Status) {
        self.open.remove(&lane);
        put_lane_error(out, lane, status);
    }

    /// Writes what the driver answered for `lane` into `out`, unless the lane closed meanwhile.
    fn settle(&mut self, out: &mut Vec<u8>, lane: u32, generation: u64, outcome: Outcome) {
        let Some(state) = self
            .open
            .get_mut(&lane)
            .filter(|state| state.generation == generation)
        else {
            return;
        };
        state.busy = false;
        match outcome {
            Outcome::Opened(Ok(attempt)) => {
                state.attempt = Some(attempt);
                put_lane_empty(out, FrameType::Accepted, lane);
            }
            Outcome::Answered(Ok(answer)) => {
                if let Err(e) = put_lane_frame(out, FrameType::Message, lane, &answer) {
                    let status = Status::internal(format!("cannot frame the answer: {e}"));
                    self.refuse(out, lane, &status);
                }
            }
            Outcome::Opened(Err(status)) | Outcome::Answered(Err(status)) => {
                self.refuse(out, lane, &status);
            }
        }
    }
}

/// Ends the connection after a frame it cannot take, telling the client why where the framing
/// still allows it (as an own framed connection does).
async fn refuse(stream: &mut TcpStream, e: &FrameError) {
    if let Some(status) = crate::framed::unreadable(e) {
        crate::framed::refuse(stream, &status).await;
    }
}
