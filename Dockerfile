# Image of the cashout command, used by docker-compose.yml for every service but Redis.
# It runs on the current Node.js LTS line (the package itself supports Node.js 20.19 and newer).

# --- build: compile the TypeScript sources with the development dependencies ------------------
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY src ./src
COPY jobs ./jobs
RUN npx tsc -p tsconfig.build.json

# --- runtime: production dependencies only, the compiled code, the files read at run time ----
FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/jobs ./dist/jobs
# Files the program reads from its src/ folder at run time (package.json "files" lists the same).
COPY src/contract/supported-banks.json ./src/contract/supported-banks.json
COPY src/ledger/lua ./src/ledger/lua
COPY src/results/templates ./src/results/templates
COPY src/dashboard/templates ./src/dashboard/templates
COPY src/sandbox/static ./src/sandbox/static
COPY samples ./samples
RUN mkdir -p /data/inbox /data/reports && chown -R node:node /data
# The image's own "node" user (uid 1000), never root.
USER node
ENTRYPOINT ["node", "bin/cashout.js"]
CMD ["--help"]
