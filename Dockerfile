# Image of the cashout command, used by docker-compose.yml for every service.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY jobs ./jobs
COPY samples ./samples
RUN npm ci --ignore-scripts && npx tsc -p tsconfig.build.json && npm prune --omit=dev \
 && mkdir -p /data/inbox /data/reports && chown -R node:node /data
USER node
ENTRYPOINT ["node", "bin/cashout.js"]
CMD ["--help"]
