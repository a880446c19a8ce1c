# The e2e runner for docker-compose.yaml: the repository's e2e tests, run
# against the proxy named by GUARD_PROXY_ADDR. Build context: the repository
# root. The golang image brings curl, which the compose command uses to wait
# for Envoy.
FROM golang:1.26
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Compile the tests at build time (without running them), so a compile error
# fails the build and the run starts at once from a warm build cache.
RUN go test -c -o /tmp/e2e.test ./e2e/
CMD ["go", "test", "./e2e/", "-count=1", "-v"]
