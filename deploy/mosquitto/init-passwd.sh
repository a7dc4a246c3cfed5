#!/bin/sh
# Run by compose.postgres.yaml's mosquitto-init on every `up`: puts Saito's account (user saito, password
# SAITO_MQTT_PASSWORD) in the password file, keeping every other entry (the hubs). Mosquitto reads the file at start.
set -eu
f=/mosquitto/auth/passwd
if [ -s "$f" ]; then
  mosquitto_passwd -b "$f" saito "$SAITO_MQTT_PASSWORD"
else
  mosquitto_passwd -c -b "$f" saito "$SAITO_MQTT_PASSWORD"
fi
chown -R mosquitto:mosquitto /mosquitto/auth
chmod 0700 /mosquitto/auth
chmod 0600 "$f"
