# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""Walking model.layers: print each layer's name, output shape and parameter count,
freeze them, report which are trainable, unfreeze the last two (a slice), reach one by
index. The last loop reads the weights, which has no
translation here: it stays a marked stub."""

import torch
from torch import nn


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:10).

    Input ``x``: (N, 12) float32.
    Returns: (N, 1).
    """

    def __init__(self, vocab_size=100):
        super().__init__()
        self.embedding1 = nn.Embedding(vocab_size, 8)
        self.lstm1 = nn.LSTM(8, 16, batch_first=True)
        # Keras has one bias: torch's second (bias_hh) stays zero
        self.lstm1.bias_hh_l0.requires_grad_(False)
        self.fc1 = nn.Linear(16, 1)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.uniform_(self.embedding1.weight, -0.05, 0.05)
        nn.init.xavier_uniform_(self.lstm1.weight_ih_l0)
        nn.init.orthogonal_(self.lstm1.weight_hh_l0)
        nn.init.zeros_(self.lstm1.bias_ih_l0)
        nn.init.zeros_(self.lstm1.bias_hh_l0)
        nn.init.ones_(self.lstm1.bias_ih_l0[16:32])  # Keras unit_forget_bias
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)

    def forward(self, x):
        x = self.embedding1(x.long())
        x_seq, (_, _) = self.lstm1(x)
        x = x_seq[:, -1]
        x = torch.sigmoid(self.fc1(x))
        return x


def build_model(vocab_size=100, max_len=12):
    return Net(vocab_size)


if __name__ == "__main__":
    model = build_model()
    # model.layers: the torch module's children, one per Keras layer, under torch's names
    # each layer's output shape (batch axis None) as Keras computes it, channels-first
    output_shapes = {"embedding1": (None, 12, 8), "lstm1": (None, 16), "fc1": (None, 1)}
    for layer_name, layer in model.named_children():
        print(
            f"{layer_name:12s} {output_shapes[layer_name]} {sum(t.numel() for t in layer.state_dict().values() if t.is_floating_point())}"
        )
    # freeze everything (fine-tuning would unfreeze the head)
    # model.layers: the torch module's children, one per Keras layer, under torch's names
    for layer_name, layer in model.named_children():
        layer.requires_grad_(False)
    # model.layers: the torch module's children, one per Keras layer, under torch's names
    for layer_name, layer in model.named_children():
        print(layer_name, all(p.requires_grad for p in layer.parameters()))
    # fine-tuning: unfreeze the last two layers
    # model.layers: the torch module's children, one per Keras layer, under torch's names
    for layer_name, layer in list(model.named_children())[-2:]:
        layer.requires_grad_(True)
    model.fc1.requires_grad_(True)
    print(
        "head:",
        "fc1",
        (None, 1),
        sum(
            t.numel() for t in model.fc1.state_dict().values() if t.is_floating_point()
        ),
    )
    embedding = model.embedding1
    # TODO(transpiler): not translated yet (input.py:33)
    # for layer in model.layers:
    #     print(layer.name, [w.shape for w in layer.get_weights()])
    raise NotImplementedError(
        "transpiler: 'for layer in model.layers: print(layer.name, [w.shape for w in laye...' (input.py:33) is not translated yet"
    )
