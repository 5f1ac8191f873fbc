#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The Python peer of nmtzoo-bench: the same transformer_small on torch.nn.Transformer.

Reads what `nmtzoo-bench --export-for-python DIR` wrote (batch shapes, and with --checkpoint the
trained weights and tokenized test sources) and measures, with the same thread count:
  * training target tokens/s of torch.nn.Transformer on batches of the same shapes;
  * a naive greedy decoder that translates one sentence at a time, encodes it once and reruns the
    decoder over the whole prefix at every step, as the PyTorch translation tutorial does, with nmtzoo's trained weights loaded
    (the parameter names map one-to-one; nn.Transformer's extra final norms are removed because
    the post-LN model of the paper has none).
Prints one JSON line; with --compare DIR/cpp.json also prints the C++/Python ratios.
Needs Debian's python3-torch (scripts/setup.sh --with-python); never needed by the build or tests.
"""
import argparse
import json
import math
import os
import time

import torch
import torch.nn as nn

PAD, UNK, BOS, EOS = 0, 1, 2, 3


class Seq2SeqTransformer(nn.Module):
    def __init__(self, vocab, d_model, heads, ffn, enc_layers, dec_layers, dropout, max_positions=1024):
        super().__init__()
        self.d_model = d_model
        self.embed = nn.Embedding(vocab, d_model, padding_idx=PAD)
        self.transformer = nn.Transformer(d_model, heads, enc_layers, dec_layers, ffn, dropout,
                                          batch_first=True)
        self.transformer.encoder.norm = None  # post-LN as in the paper: no final norm
        self.transformer.decoder.norm = None
        position = torch.arange(max_positions).unsqueeze(1)
        frequency = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        table = torch.zeros(max_positions, d_model)
        table[:, 0::2] = torch.sin(position * frequency)
        table[:, 1::2] = torch.cos(position * frequency)
        self.register_buffer("positions", table)
        self.dropout = nn.Dropout(dropout)

    def embed_tokens(self, tokens):
        x = self.embed(tokens) * math.sqrt(self.d_model) + self.positions[: tokens.size(1)]
        return self.dropout(x)

    def forward(self, src, tgt_in):
        causal = self.transformer.generate_square_subsequent_mask(tgt_in.size(1))
        h = self.transformer(self.embed_tokens(src), self.embed_tokens(tgt_in), tgt_mask=causal,
                             src_key_padding_mask=src.eq(PAD), memory_key_padding_mask=src.eq(PAD))
        return h @ self.embed.weight.t()  # tied output projection

    # The tutorial's greedy decoder: encode once, then rerun the decoder over the whole prefix.
    def encode(self, src):
        return self.transformer.encoder(self.embed_tokens(src), src_key_padding_mask=src.eq(PAD))

    def decode(self, memory, src, tgt_in):
        causal = self.transformer.generate_square_subsequent_mask(tgt_in.size(1))
        h = self.transformer.decoder(self.embed_tokens(tgt_in), memory, tgt_mask=causal,
                                     memory_key_padding_mask=src.eq(PAD))
        return h @ self.embed.weight.t()

    def load_nmtzoo(self, path):
        weights = torch.load(path)
        mapped = {"embed.weight": weights["src_embed.weight"]}
        for name, tensor in weights.items():
            if name.startswith(("encoder.", "decoder.")):
                mapped["transformer." + name] = tensor
        missing, unexpected = self.load_state_dict(mapped, strict=False)
        missing = [m for m in missing if m != "positions"]
        if missing or unexpected:
            raise SystemExit(f"weights do not map: missing {missing}, unexpected {unexpected}")


def bench_training(model_spec, shapes, threads, warmup, repeats):
    torch.manual_seed(1)
    model = Seq2SeqTransformer(model_spec["vocab"], model_spec["d_model"], model_spec["heads"],
                               model_spec["ffn_dim"], model_spec["encoder_layers"],
                               model_spec["decoder_layers"], 0.1)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4, betas=(0.9, 0.98), eps=1e-9)
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)
    vocab = model_spec["vocab"]

    def step(shape):
        src = torch.randint(4, vocab, (shape["rows"], shape["src_len"]))
        tgt = torch.randint(4, vocab, (shape["rows"], shape["tgt_len"] + 1))
        optimizer.zero_grad()
        logits = model(src, tgt[:, :-1])
        loss = loss_fn(logits.reshape(-1, vocab), tgt[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()

    for shape in shapes[:warmup]:
        step(shape)
    seconds = math.inf
    for _ in range(repeats):  # the fastest pass over the same batches, as nmtzoo-bench does
        start = time.perf_counter()
        for shape in shapes:
            step(shape)
        seconds = min(seconds, time.perf_counter() - start)
    tokens = sum(s["tgt_tokens"] for s in shapes)
    return tokens / seconds


def bench_naive_greedy(model_spec, weights, sources, limit):
    model = Seq2SeqTransformer(model_spec["vocab"], model_spec["d_model"], model_spec["heads"],
                               model_spec["ffn_dim"], model_spec["encoder_layers"],
                               model_spec["decoder_layers"], 0.0)
    model.load_nmtzoo(weights)
    model.eval()
    sources = sources[:limit] if limit else sources
    outputs = []
    start = time.perf_counter()
    with torch.no_grad():
        for ids in sources:
            src = torch.tensor([ids + [EOS]])
            max_len = int(model_spec["max_len_a"] * len(ids)) + model_spec["max_len_b"]
            ys = [BOS]
            memory = model.encode(src)
            for _ in range(max_len):
                logits = model.decode(memory, src, torch.tensor([ys]))[0, -1]
                logits[[PAD, BOS]] = -math.inf
                if len(ys) == 1:
                    logits[EOS] = -math.inf  # min_len 1, as nmtzoo's search
                token = int(logits.argmax())
                if token == EOS:
                    break
                ys.append(token)
            outputs.append(ys[1:])
    seconds = time.perf_counter() - start
    return len(sources) / seconds, outputs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="folder written by nmtzoo-bench --export-for-python")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3, help="timed passes; the fastest counts")
    parser.add_argument("--sentences", type=int, default=0, help="decode only the first N")
    parser.add_argument("--compare", help="nmtzoo-bench --json output, to print ratios")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    spec = json.load(open(f"{args.dir}/model.json"))
    # The peer is the paper's model on torch.nn.Transformer: another architecture would be timed as
    # a different model in training and refused only after it, when its weights do not load.
    peer = {"positions": "sinusoidal", "norm": "post", "activation": "relu"}
    for key, value in peer.items():
        if spec.get(key, value) != value:
            raise SystemExit(f"{args.dir}/model.json: model.{key} is '{spec[key]}': the peer (torch.nn.Transformer) "
                             f"has {key} '{value}' only; export a model with model.{key}={value}")
    result = {"threads": args.threads, "torch": torch.__version__}
    shapes = json.load(open(f"{args.dir}/train_shapes.json"))
    result["train_tgt_tokens_per_second"] = bench_training(spec, shapes, args.threads, args.warmup, args.repeats)
    rate = None  # decoding needs trained weights: nmtzoo-bench exports them with --checkpoint only
    if os.path.exists(f"{args.dir}/weights.pt"):
        sources = json.load(open(f"{args.dir}/test_src.json"))
        rate, outputs = bench_naive_greedy(spec, f"{args.dir}/weights.pt", sources, args.sentences)
        result["naive_greedy_sentences_per_second"] = rate
        try:
            ours = json.load(open(f"{args.dir}/greedy_ids.json"))
            same = sum(1 for a, b in zip(ours, outputs) if a == b)
            result["greedy_outputs_identical_to_nmtzoo"] = f"{same}/{len(outputs)}"
        except FileNotFoundError:
            pass
    print(json.dumps(result))
    if args.compare:
        cpp = json.load(open(args.compare))
        if "training" in cpp:
            ours = cpp["training"]["tgt_tokens_per_second"]
            theirs = result["train_tgt_tokens_per_second"]
            print(f"training: nmtzoo {ours:.0f} vs torch.nn.Transformer {theirs:.0f} target tokens/s"
                  f" = {ours / theirs:.2f}x")
        for mode in cpp.get("decoding", []) if rate else []:
            print(f"decoding {mode['mode']:<30} {mode['sentences_per_second']:8.1f} sentences/s ="
                  f" {mode['sentences_per_second'] / rate:6.1f}x the naive Python greedy decoder"
                  f" ({rate:.1f} sentences/s)")


if __name__ == "__main__":
    main()
