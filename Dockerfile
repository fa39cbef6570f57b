# sqs-worker as an ECS task. Multi-stage: the Rust toolchain builds the
# binary; the runtime image holds it alone, with glibc and CA certificates,
# and runs as a non-root user. Build: make worker-image.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p sqs-worker

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/sqs-worker /usr/local/bin/sqs-worker
USER nonroot
ENV HEALTH_FILE=/tmp/sqs-worker-last-poll
ENTRYPOINT ["/usr/local/bin/sqs-worker"]
