"""The models: the Transformer encoder language model and the U-Net defined
here, ModelSpec (a model with its inputs and loss) and build_model, which
also builds torchvision classifiers and --model-module's models."""

import importlib.util
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

from .errors import ExportError


class SelfAttention(nn.Module):
    """Multi-head self-attention with explicit linear / bmm / softmax."""

    def __init__(self, d_model, heads, dropout):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        b, s, d = x.shape
        h = self.heads
        hd = d // h

        def split_heads(t):
            return t.reshape(b, s, h, hd).transpose(1, 2).reshape(b * h, s, hd)
        q, k, v = (split_heads(t) for t in self.qkv(x).split(d, dim=-1))
        att = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(hd)
        att = self.drop(torch.softmax(att, dim=-1))
        y = torch.bmm(att, v).reshape(b, h, s, hd).transpose(1, 2).reshape(b, s, d)
        return self.out(y)

class EncoderLayer(nn.Module):
    """Pre-norm Transformer encoder layer."""

    def __init__(self, d_model, heads, d_ff, dropout, activation):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = SelfAttention(d_model, heads, dropout)
        self.drop1 = nn.Dropout(dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, d_ff)
        self.act = nn.GELU() if activation == "gelu" else nn.ReLU()
        self.ff2 = nn.Linear(d_ff, d_model)
        self.drop2 = nn.Dropout(dropout)

    def forward(self, x):
        x = x + self.drop1(self.attn(self.norm1(x)))
        return x + self.drop2(self.ff2(self.act(self.ff1(self.norm2(x)))))

class TransformerLM(nn.Module):
    """Token embedding + learned positions, encoder layers, final norm,
    a linear head over the vocabulary (token-level logits)."""

    def __init__(self, vocab, seq, d_model=256, heads=4, d_ff=1024, layers=6,
                 dropout=0.1, activation="gelu"):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.zeros(seq, d_model))
        self.drop = nn.Dropout(dropout)
        self.layers = nn.ModuleList(EncoderLayer(d_model, heads, d_ff, dropout, activation)
                                    for _ in range(layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        x = self.drop(self.embed(tokens) + self.pos)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))

class ConvBlock(nn.Sequential):
    """(conv3x3 - batch norm - ReLU) x 2."""

    def __init__(self, cin, cout):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

class UNet(nn.Module):
    """A small U-Net: conv blocks, 2x2 max-pool down, ConvTranspose2d(2,
    stride 2) up, skip connections concatenated, 1x1 conv head."""

    def __init__(self, classes, cin=3, base=16, depth=3):
        super().__init__()
        ch = [base * 2 ** i for i in range(depth + 1)]
        self.down = nn.ModuleList(ConvBlock(cin if i == 0 else ch[i - 1], ch[i])
                                  for i in range(depth))
        self.pool = nn.MaxPool2d(2)
        self.mid = ConvBlock(ch[depth - 1], ch[depth])
        self.up = nn.ModuleList(nn.ConvTranspose2d(ch[i + 1], ch[i], 2, stride=2)
                                for i in reversed(range(depth)))
        self.dec = nn.ModuleList(ConvBlock(2 * ch[i], ch[i])
                                 for i in reversed(range(depth)))
        self.head = nn.Conv2d(ch[0], classes, 1)

    def forward(self, x):
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = self.pool(x)
        x = self.mid(x)
        for up, block in zip(self.up, self.dec):
            x = block(torch.cat([skips.pop(), up(x)], dim=1))
        return self.head(x)


UNET_DEPTH = 3


class ModelSpec:
    """A model with its inputs: data (shape, dtype, Init), target (shape,
    number of classes) and the loss on its output."""

    def __init__(self, name, module, data_shape, data_int, target_shape, classes, loss):
        self.name, self.module = name, module
        self.dtype = "f32"
        self.data_shape, self.data_int = list(data_shape), data_int
        self.target_shape, self.classes = list(target_shape), classes
        self.loss = loss


def build_model(args):
    """The ModelSpec of args.model, in double precision with --dtype f64."""
    spec = _build_model(args)
    if args.dtype == "f64":
        spec.module.double()
        spec.dtype = "f64"
    return spec


def _build_model(args):
    torch.manual_seed(0)
    name = args.model
    cross_entropy = lambda out, t: F.cross_entropy(out, t)
    if name == "transformer":
        if args.size:
            raise ExportError("model 'transformer' takes --seq, not --size")
        seq = 128 if args.seq is None else args.seq
        module = TransformerLM(args.vocab, seq, layers=args.layers, activation=args.activation)
        loss = lambda out, t: F.cross_entropy(out.reshape(-1, out.shape[-1]), t.reshape(-1))
        return ModelSpec(name, module, [args.batch, seq], True, [args.batch, seq],
                         args.vocab, loss)
    if args.seq:
        raise ExportError("model '%s' takes --size, not --seq" % name)
    h, w = args.size or (224, 224)
    if name == "unet":
        if h % 2 ** UNET_DEPTH or w % 2 ** UNET_DEPTH:
            raise ExportError("model 'unet': --size must be divisible by %d"
                              % 2 ** UNET_DEPTH)
        module = UNet(args.classes or 4, depth=UNET_DEPTH)
        return ModelSpec(name, module, [args.batch, 3, h, w], False, [args.batch, h, w],
                         args.classes or 4, cross_entropy)
    classes = args.classes or 1000
    if args.model_module:
        spec = importlib.util.spec_from_file_location("remat_user_model", args.model_module)
        user = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(user)
        module = user.build_model(name, classes)
    else:
        known = torchvision.models.list_models(module=torchvision.models)
        if name not in known:
            raise ExportError("unknown model '%s': expected transformer, unet or a "
                              "torchvision classifier (%s)" % (name, ", ".join(known)))
        extra = {"aux_logits": False, "init_weights": False} \
            if name in ("googlenet", "inception_v3") else {}
        module = torchvision.models.get_model(name, weights=None, num_classes=classes, **extra)
    # A vision transformer's patch embedding is built for one image size.
    fixed = getattr(module, "image_size", None)
    if isinstance(fixed, int) and (h, w) != (fixed, fixed):
        raise ExportError("model '%s' takes images of %dx%d only (--size %d %d), not %dx%d"
                          % (name, fixed, fixed, fixed, fixed, h, w))
    return ModelSpec(name, module, [args.batch, 3, h, w], False, [args.batch], classes,
                     cross_entropy)
