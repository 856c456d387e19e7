#!/bin/sh
# Health check of the Redis service in docker-compose.yml: healthy only when PING is answered PONG.
# redis-cli exits 0 on an error reply too (LOADING while Redis reads its append-only file at start,
# MASTERDOWN, NOAUTH), so the reply is compared, not the exit code. REDIS_HEALTH_HOST and
# REDIS_HEALTH_PORT default to 127.0.0.1 and 6379, where Redis listens inside its container.
reply=$(redis-cli -h "${REDIS_HEALTH_HOST:-127.0.0.1}" -p "${REDIS_HEALTH_PORT:-6379}" ping 2>/dev/null) || exit 1
[ "$reply" = "PONG" ]
