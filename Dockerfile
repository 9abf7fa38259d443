# tidemark in a container: build on Debian 12, run on a slim Debian 12 with
# only the runtime libraries, as the unprivileged user tidemark. The daemon
# reads /etc/tidemark/tidemark.yaml; the HEALTHCHECK asks its /healthz with
# `tidemark healthcheck` (the image has no curl). docs/operations.md, "Container".
#   docker build -t tidemark .
#   docker run -v $PWD/config:/etc/tidemark -e SHOP_DSN=... -p 9464:9464 tidemark
FROM debian:bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config libboost-dev libboost-system-dev libpq-dev \
      libyaml-cpp-dev libspdlog-dev libfmt-dev prometheus-cpp-dev doctest-dev libhowardhinnant-date-dev \
      libsystemd-dev libcli11-dev nlohmann-json3-dev libssl-dev libcrypt-dev tzdata \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# -O2, as the Debian package is built.
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DTIDEMARK_BUILD_TESTS=OFF \
    && cmake --build /build -j "$(nproc)" \
    && strip /build/daemon/tidemark

FROM debian:bookworm-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libpq5 libyaml-cpp0.7 libspdlog1.10 libfmt9 libprometheus-cpp-core1.0 \
      libdate-tz3 libsystemd0 libssl3 tzdata ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --no-create-home --shell /usr/sbin/nologin tidemark
COPY --from=build /build/daemon/tidemark /usr/local/bin/tidemark
COPY config/tidemark.yaml /etc/tidemark/tidemark.yaml
COPY config/pipelines /etc/tidemark/pipelines
USER tidemark
EXPOSE 9464
# The metrics address must not be loopback inside a container: set
# metrics: { listen: "0.0.0.0:9464" } in the mounted tidemark.yaml.
# /healthz: 200 while the event loop turns. The check reads the same
# tidemark.yaml for the port (and metrics.web_config: TLS without checking
# the certificate; with basic_auth_users, pass TIDEMARK_HEALTHCHECK_USER and
# TIDEMARK_HEALTHCHECK_PASSWORD with -e); a custom --config needs the same here.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
  CMD ["/usr/local/bin/tidemark", "healthcheck", "--config", "/etc/tidemark/tidemark.yaml"]
# SIGTERM (podman/docker stop) lets runs in flight finish within
# shutdown_grace; give `docker stop -t` more than that.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/tidemark"]
CMD ["serve", "--config", "/etc/tidemark/tidemark.yaml"]
