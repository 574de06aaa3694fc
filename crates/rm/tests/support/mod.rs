//! A fake NodeManager's container manager shared by the RM's integration tests.

use std::sync::{Arc, Mutex};

use weft_proto::v1::container_management_server::ContainerManagement;
use weft_proto::v1::*;

/// A fake NM's container manager that records what it is asked to start.
#[derive(Clone, Default)]
pub(crate) struct FakeNm {
    pub(crate) started: Arc<Mutex<Vec<StartContainerRequest>>>,
}

#[tonic::async_trait]
impl ContainerManagement for FakeNm {
    async fn start_containers(
        &self,
        request: tonic::Request<StartContainersRequest>,
    ) -> Result<tonic::Response<StartContainersResponse>, tonic::Status> {
        let req = request.into_inner();
        let ids = req
            .start_container_request
            .iter()
            .map(|r| r.container_id.clone())
            .collect();
        self.started
            .lock()
            .unwrap()
            .extend(req.start_container_request);
        Ok(tonic::Response::new(StartContainersResponse {
            succeeded_requests: ids,
            failed_requests: Vec::new(),
        }))
    }
    async fn stop_containers(
        &self,
        request: tonic::Request<StopContainersRequest>,
    ) -> Result<tonic::Response<StopContainersResponse>, tonic::Status> {
        Ok(tonic::Response::new(StopContainersResponse {
            succeeded_requests: request.into_inner().container_id,
            failed_requests: Vec::new(),
        }))
    }
    async fn get_container_statuses(
        &self,
        _: tonic::Request<GetContainerStatusesRequest>,
    ) -> Result<tonic::Response<GetContainerStatusesResponse>, tonic::Status> {
        Ok(tonic::Response::new(GetContainerStatusesResponse::default()))
    }
}
