# The assocmem HTTP server: `docker build -t assocmem .`, then see compose.yaml (docs/operations/docker.md).
FROM python:3.11-slim

WORKDIR /src
# The default embedder's form ships ready to run in its own package: no torch in the image.
COPY packages/assocmem-minilm ./packages/assocmem-minilm
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir ./packages/assocmem-minilm ".[server,postgres,embed]"

RUN useradd --create-home --uid 10001 assocmem && mkdir /data && chown assocmem /data
USER assocmem
# Everything the server keeps (the SQLite store, API keys) is in /data.
ENV ASSOCMEM_HOME=/data \
    ASSOCMEM_KEYS=/data/keys.json \
    ASSOCMEM_EMBEDDER=minilm \
    ASSOCMEM_LOG_LEVEL=info
VOLUME /data
EXPOSE 8765

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=4)"]
ENTRYPOINT ["assocmem"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8765"]
