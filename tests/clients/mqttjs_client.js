#!/usr/bin/env node
// A small command line around MQTT.js (the `mqtt` npm package, v5), driven by Saito's
// conformance tests. Same shape and output as paho_client.py:
//
//   node mqttjs_client.js pub --url mqtt://127.0.0.1:1883 [--version 311|5] -t TOPIC -m MSG [-m MSG ...]
//   node mqttjs_client.js sub --url ws://127.0.0.1:8080/mqtt -t FILTER [-t FILTER ...] --count N
//   URLs: mqtt://host:port, mqtts://host:port (with --cafile), ws://host:port/path, wss://host:port/path
//
// stdout carries one JSON object per line: {"event":"connected"|"subscribed"|"message"|"published"|"dropped",...}
// (fields as in paho_client.py). Errors go to stderr as "mqttjs_client: error: ..." with exit code
// 1 connection or protocol failure, 2 bad arguments, 3 CONNACK refused, 4 SUBACK refused, 5 timed out.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const { parseArgs } = require('node:util');

const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;
const EXIT_CONNACK = 3;
const EXIT_SUBACK = 4;
const EXIT_TIMEOUT = 5;

let mqtt;
try {
  mqtt = require('mqtt');
} catch (err) {
  fail(`the mqtt package is not installed next to this script (${err.message}). Run "npm ci" in ${__dirname}.`);
}

function emit(obj) {
  // Writes to pipes and files are synchronous on Linux, so nothing is lost on process.exit.
  process.stdout.write(JSON.stringify(obj) + '\n');
}

function fail(message, code = EXIT_FAILURE) {
  process.stderr.write(`mqttjs_client: error: ${message}\n`);
  process.exit(code);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function describePayload(buffer) {
  let text = null;
  try {
    text = utf8.decode(buffer);
  } catch {
    text = null;
  }
  return {
    payload_b64: buffer.toString('base64'),
    payload: text,
    size: buffer.length,
    sha256: crypto.createHash('sha256').update(buffer).digest('hex'),
  };
}

function describeProperties(props) {
  const out = {};
  if (!props) {
    return out;
  }
  if (props.userProperties) {
    out.user_properties = [];
    for (const [key, value] of Object.entries(props.userProperties)) {
      for (const v of Array.isArray(value) ? value : [value]) {
        out.user_properties.push([key, String(v)]);
      }
    }
  }
  if (props.contentType !== undefined) out.content_type = props.contentType;
  if (props.payloadFormatIndicator !== undefined) out.payload_format_indicator = props.payloadFormatIndicator ? 1 : 0;
  if (props.messageExpiryInterval !== undefined) out.message_expiry_interval = props.messageExpiryInterval;
  if (props.responseTopic !== undefined) out.response_topic = props.responseTopic;
  if (props.correlationData !== undefined) out.correlation_data_b64 = Buffer.from(props.correlationData).toString('base64');
  if (props.subscriptionIdentifier !== undefined) {
    const ids = props.subscriptionIdentifier;
    out.subscription_identifiers = Array.isArray(ids) ? ids : [ids];
  }
  return out;
}

function parse(argv) {
  const usage = 'usage: mqttjs_client.js pub|sub --url URL [options] (see the top of this file)';
  const command = argv[0];
  if (command !== 'pub' && command !== 'sub') {
    fail(usage, EXIT_USAGE);
  }
  let values;
  try {
    ({ values } = parseArgs({
      args: argv.slice(1),
      strict: true,
      allowPositionals: false,
      options: {
        url: { type: 'string' },
        cafile: { type: 'string' },
        version: { type: 'string', default: '311' },
        id: { type: 'string', short: 'i' },
        'no-clean': { type: 'boolean', default: false },
        'session-expiry': { type: 'string' },
        keepalive: { type: 'string', short: 'k', default: '60' },
        qos: { type: 'string', short: 'q', default: '0' },
        'will-topic': { type: 'string' },
        'will-payload': { type: 'string', default: '' },
        'will-qos': { type: 'string', default: '0' },
        'will-retain': { type: 'boolean', default: false },
        'disconnect-without-close': { type: 'boolean', default: false },
        timeout: { type: 'string' },
        topic: { type: 'string', short: 't', multiple: true, default: [] },
        // pub
        message: { type: 'string', short: 'm', multiple: true, default: [] },
        'null-message': { type: 'boolean', short: 'n', default: false },
        'payload-file': { type: 'string', short: 'f' },
        'payload-size': { type: 'string' },
        retain: { type: 'boolean', short: 'r', default: false },
        'user-property': { type: 'string', multiple: true, default: [] },
        'content-type': { type: 'string' },
        // sub
        count: { type: 'string', short: 'C' },
      },
    }));
  } catch (err) {
    fail(`${err.message}\n${usage}`, EXIT_USAGE);
  }

  const int = (name, value) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) fail(`--${name} wants a non-negative integer, got ${value}`, EXIT_USAGE);
    return n;
  };
  const qos = (name, value) => {
    const n = int(name, value);
    if (n > 2) fail(`--${name} must be 0, 1 or 2`, EXIT_USAGE);
    return n;
  };
  const versions = { 311: 4, 4: 4, 5: 5 };
  if (!(values.version in versions)) fail('--version must be 311 (or 4) or 5', EXIT_USAGE);
  if (!values.url) fail('--url is required (mqtt://, mqtts://, ws:// or wss://)', EXIT_USAGE);

  const args = {
    command,
    url: values.url,
    cafile: values.cafile,
    protocolVersion: versions[values.version],
    clientId: values.id,
    noClean: values['no-clean'],
    sessionExpiry: int('session-expiry', values['session-expiry']),
    keepalive: int('keepalive', values.keepalive),
    qos: qos('qos', values.qos),
    will: values['will-topic'] === undefined ? undefined : {
      topic: values['will-topic'],
      payload: Buffer.from(values['will-payload'], 'utf8'),
      qos: qos('will-qos', values['will-qos']),
      retain: values['will-retain'],
    },
    dropAtEnd: values['disconnect-without-close'],
    topics: values.topic,
    count: int('count', values.count),
    retain: values.retain,
    userProperties: values['user-property'],
    contentType: values['content-type'],
  };
  if (args.sessionExpiry !== undefined && args.protocolVersion !== 5) fail('--session-expiry needs --version 5', EXIT_USAGE);
  if (args.noClean && !args.clientId) fail('--no-clean needs a client id (-i)', EXIT_USAGE);
  if (values.timeout !== undefined) {
    args.timeout = Number(values.timeout);
    if (!(args.timeout > 0)) fail('--timeout wants seconds > 0', EXIT_USAGE);
  } else {
    args.timeout = 30;
  }

  if (command === 'pub') {
    const sources = [values.message.length > 0, values['null-message'], values['payload-file'] !== undefined,
      values['payload-size'] !== undefined].filter(Boolean).length;
    if (sources > 1) fail('give only one of -m, -n, --payload-file, --payload-size', EXIT_USAGE);
    let payloads = [];
    if (values.message.length > 0) payloads = values.message.map((m) => Buffer.from(m, 'utf8'));
    else if (values['null-message']) payloads = [Buffer.alloc(0)];
    else if (values['payload-file'] !== undefined) payloads = [fs.readFileSync(values['payload-file'])];
    else if (values['payload-size'] !== undefined) payloads = [crypto.randomBytes(int('payload-size', values['payload-size']))];
    const t = args.topics;
    if (payloads.length > 0 && t.length === 0) fail('pub needs -t', EXIT_USAGE);
    if (payloads.length === 0) args.messages = [];
    else if (t.length === 1) args.messages = payloads.map((p) => [t[0], p]);
    else if (payloads.length === 1) args.messages = t.map((topic) => [topic, payloads[0]]);
    else if (t.length === payloads.length) args.messages = t.map((topic, i) => [topic, payloads[i]]);
    else fail('give one topic, one message, or as many topics as messages', EXIT_USAGE);
    if ((args.userProperties.length > 0 || args.contentType) && args.protocolVersion !== 5) {
      fail('--user-property and --content-type need --version 5', EXIT_USAGE);
    }
  } else if (args.topics.length === 0 && !args.noClean) {
    fail('sub needs -t, unless it resumes a session with --no-clean', EXIT_USAGE);
  }
  return args;
}

function connect(args) {
  const options = {
    protocolVersion: args.protocolVersion,
    clean: !args.noClean,
    keepalive: args.keepalive,
    reconnectPeriod: 0, // a test client reports a lost connection instead of hiding it
    connectTimeout: 10_000,
    resubscribe: false,
  };
  if (args.clientId !== undefined) options.clientId = args.clientId;
  if (args.sessionExpiry !== undefined) options.properties = { sessionExpiryInterval: args.sessionExpiry };
  if (args.will) options.will = args.will;
  if (args.cafile) {
    options.ca = fs.readFileSync(args.cafile);
    options.rejectUnauthorized = true;
  }
  const client = mqtt.connect(args.url, options);
  const state = { connected: false, ending: false };

  client.on('error', (err) => {
    if (!state.connected && typeof err.code === 'number') {
      fail(`CONNACK refused the connection: ${err.message} (${err.code})`, EXIT_CONNACK);
    }
    fail(`${state.connected ? 'connection error' : `cannot connect to ${args.url}`}: ${err.message}`);
  });
  client.on('close', () => {
    if (!state.ending) {
      fail(state.connected ? 'the broker closed the connection' : `cannot connect to ${args.url}: connection closed`);
    }
  });
  client.on('disconnect', (packet) => {
    fail(`the broker sent DISCONNECT (reason code ${packet.reasonCode})`);
  });

  const connected = new Promise((resolve) => {
    client.once('connect', (connack) => {
      state.connected = true;
      emit({ event: 'connected', session_present: Boolean(connack.sessionPresent), reason_code: connack.reasonCode ?? connack.returnCode ?? 0 });
      resolve();
    });
  });
  return { client, state, connected };
}

function finish(args, client, state) {
  state.ending = true;
  if (args.dropAtEnd) {
    // Cut the connection without DISCONNECT, so the broker publishes the will.
    client.stream.destroy();
    emit({ event: 'dropped' });
    process.exit(0);
  }
  client.end(false, {}, () => process.exit(0));
}

async function runPub(args, client, state) {
  const properties = {};
  if (args.userProperties.length > 0) {
    properties.userProperties = {};
    for (const item of args.userProperties) {
      const i = item.indexOf('=');
      if (i < 0) fail(`--user-property wants KEY=VALUE, got ${item}`, EXIT_USAGE);
      const key = item.slice(0, i);
      const value = item.slice(i + 1);
      const existing = properties.userProperties[key];
      properties.userProperties[key] = existing === undefined ? value : [].concat(existing, value);
    }
  }
  if (args.contentType) properties.contentType = args.contentType;
  for (const [topic, payload] of args.messages) {
    const opts = { qos: args.qos, retain: args.retain };
    if (Object.keys(properties).length > 0) opts.properties = properties;
    // Resolves once written (QoS 0), on PUBACK (QoS 1) or on PUBCOMP (QoS 2).
    const packet = await client.publishAsync(topic, payload, opts).catch((err) => fail(`publish to ${topic} failed: ${err.message}`));
    const { size, sha256 } = describePayload(payload);
    emit({ event: 'published', topic, mid: packet?.messageId ?? 0, qos: args.qos, size, sha256 });
  }
  finish(args, client, state);
}

// Listens before the CONNACK: a resumed session's queued messages follow it immediately.
function listen(args, client, state) {
  const counter = { received: 0, done: false };
  client.on('message', (topic, payload, packet) => {
    if (counter.done) return;
    counter.received += 1;
    emit({
      event: 'message',
      topic,
      ...describePayload(payload),
      qos: packet.qos,
      retain: Boolean(packet.retain),
      dup: Boolean(packet.dup),
      properties: describeProperties(packet.properties),
    });
    if (args.count !== undefined && counter.received >= args.count) {
      counter.done = true;
      // MQTT.js sends the PUBACK / PUBCOMP right after this handler returns: leave after it.
      setImmediate(() => finish(args, client, state));
    }
  });
  return counter;
}

async function runSub(args, client, state, counter) {
  if (args.topics.length > 0) {
    const filters = Object.fromEntries(args.topics.map((t) => [t, { qos: args.qos }]));
    const granted = await new Promise((resolve) => {
      client.subscribe(filters, (err, result) => {
        if (err) fail(`SUBACK refused a subscription: ${err.message}`, EXIT_SUBACK);
        resolve(result);
      });
    });
    const codes = granted.map((g) => g.qos);
    if (codes.some((c) => c >= 0x80)) fail(`SUBACK refused a subscription: reason codes ${JSON.stringify(codes)}`, EXIT_SUBACK);
    emit({ event: 'subscribed', granted: codes });
  }
  if (args.count === 0 || (args.count !== undefined && counter.received >= args.count)) {
    counter.done = true;
    finish(args, client, state);
  } else if (args.count === undefined) {
    // Collect until the timeout, then leave cleanly: the caller decides what was enough.
    setTimeout(() => {
      counter.done = true;
      finish(args, client, state);
    }, args.timeout * 1000);
  }
}

async function main() {
  const args = parse(process.argv.slice(2));
  const { client, state, connected } = connect(args);
  const counter = args.command === 'sub' ? listen(args, client, state) : undefined;
  if (args.timeout !== undefined && !(args.command === 'sub' && args.count === undefined)) {
    setTimeout(() => {
      const what = counter ? ` with ${counter.received} of ${args.count} message(s)` : '';
      fail(`timed out after ${args.timeout} s${what}`, EXIT_TIMEOUT);
    }, args.timeout * 1000);
  }
  await connected;
  if (args.command === 'pub') {
    await runPub(args, client, state);
  } else {
    await runSub(args, client, state, counter);
  }
}

main().catch((err) => fail(err && err.stack ? err.stack : String(err)));
