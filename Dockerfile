# The assocmem HTTP server: `docker build -t assocmem .`, then see compose.yaml (docs/operations/docker.md).
FROM python:3.11-slim

# torch from its CPU index first, at the version pyproject pins: the default index's wheel
# pulls the CUDA libraries, gigabytes a CPU server never loads.
RUN pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cpu torch==2.13.0

WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
COPY bench ./bench
RUN pip install --no-cache-dir ".[server,postgres,embed]"

RUN useradd --create-home --uid 10001 assocmem && mkdir /data && chown assocmem /data
USER assocmem
# Everything the server keeps (the SQLite store, API keys, the built ONNX embedder) is in /data.
ENV ASSOCMEM_HOME=/data \
    ASSOCMEM_KEYS=/data/keys.json \
    ASSOCMEM_EMBEDDER=minilm \
    ASSOCMEM_LOG_LEVEL=info
VOLUME /data
EXPOSE 8765

# The first start builds the embedder's ONNX form into /data (about 20 s, once per volume).
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=4)"]
ENTRYPOINT ["assocmem"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8765"]
