# The load nodes' image: fio pinned (fslab's preflight refuses mixed versions), nothing
# installed at start, so the container's root file system can be read-only and it needs
# no network but the controller's. Build and push it, then name it in
# fio-server-daemonset.yaml:
#   docker build -f deploy/fio-server.Dockerfile -t REGISTRY/fslab-fio-server:3.33 .
FROM debian:12-slim
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends fio=3.33-3 \
    && rm -rf /var/lib/apt/lists/*
# nobody: fio's server runs whatever job file reaches it, as this user (see the DaemonSet)
USER 65534:65534
ENTRYPOINT ["fio"]
