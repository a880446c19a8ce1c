# The reference dual-transport MCP server (cmd/mcp-dualstack), for
# docker-compose.yaml. Build context: the repository root.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/mcp-dualstack ./cmd/mcp-dualstack

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcp-dualstack /mcp-dualstack
EXPOSE 8080
ENTRYPOINT ["/mcp-dualstack"]
CMD ["-listen", "0.0.0.0:8080", "-first-event-id", "100"]
