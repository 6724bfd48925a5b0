# One image for every rollout-fleet role (worker, dashboard, sandbox-host, producer CLI).
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap python3 git patch ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/shared/package.json packages/shared/
COPY packages/vefaas-local/package.json packages/vefaas-local/
COPY packages/producer/package.json packages/producer/
COPY packages/worker/package.json packages/worker/
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
ENTRYPOINT ["node", "bin/rollout-fleet.js"]
CMD ["--help"]
